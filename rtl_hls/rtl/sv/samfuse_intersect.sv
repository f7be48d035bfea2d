// intersect: emits crds present on both sides (N matches nothing).
module samfuse_intersect (`SAMFUSE_JOIN_PORTS(ref_a, 34));
  samfuse_join_core #(.UNION(1'b0)) u_core (.*);
endmodule
