// SDDMM as one linalg.generic: X = S ⊙ (A · B), sampled at the stored entries of the
// CSR matrix S, accumulated into a sparse (hence zero) tensor.empty stored as CSR.
#CSR = #sparse_tensor.encoding<{ map = (i, j) -> (i : dense, j : compressed) }>
#sddmm = {
  indexing_maps = [
    affine_map<(i, j, k) -> (i, j)>,  // S
    affine_map<(i, j, k) -> (i, k)>,  // A
    affine_map<(i, j, k) -> (k, j)>,  // B
    affine_map<(i, j, k) -> (i, j)>   // X (out)
  ],
  iterator_types = ["parallel", "parallel", "reduction"],
  doc = "X(i,j) += S(i,j) * A(i,k) * B(k,j)"
}
module {
  func.func @sddmm(%s: tensor<8x7xf32, #CSR>, %a: tensor<8x5xf32>, %b: tensor<5x7xf32>) -> tensor<8x7xf32, #CSR> {
    %init = tensor.empty() : tensor<8x7xf32, #CSR>
    %x = linalg.generic #sddmm
      ins(%s, %a, %b : tensor<8x7xf32, #CSR>, tensor<8x5xf32>, tensor<5x7xf32>)
      outs(%init : tensor<8x7xf32, #CSR>) {
      ^bb0(%sv: f32, %av: f32, %bv: f32, %xv: f32):
        %ab = arith.mulf %av, %bv : f32
        %p = arith.mulf %sv, %ab : f32
        %acc = arith.addf %xv, %p : f32
        linalg.yield %acc : f32
    } -> tensor<8x7xf32, #CSR>
    return %x : tensor<8x7xf32, #CSR>
  }
}
