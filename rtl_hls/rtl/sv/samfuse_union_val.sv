// union_val: union whose side a carries values (crd_a, val_a, crd_b, ref_b -> crd, val_a,
// ref_b); writes N on val_a where side a lacks the coordinate (value consumers read it as
// 0). The join core only compares the crd heads and passes the second streams' 34-bit
// words through untouched, so this is samfuse_union with ref_a renamed val_a: no logic of
// its own, identical timing, value payloads unchanged.
module samfuse_union_val #(
    parameter int W = 34  // val_a's token width: 2 + 32*E for blocks of E elements
) (`SAMFUSE_JOIN_PORTS(val_a, W));
  samfuse_join_core #(.UNION(1'b1), .W(W)) u_core (`SAMFUSE_JOIN_VAL_BIND);
endmodule
