// union: emits every crd of either side, N as the ref of the side lacking it.
module samfuse_union (`SAMFUSE_JOIN_PORTS(ref_a, 34));
  samfuse_join_core #(.UNION(1'b1)) u_core (.*);
endmodule
