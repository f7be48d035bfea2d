// One GCN layer, relu(A · (X · Wᵀ) + b), as torch-mlir lowers it to linalg on tensors:
// two linalg.matmul, the transpose of a sparse (pruned) weight constant exported elided,
// a bias-add generic and relu written as arith.cmpf + arith.select.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "GCNLayer"} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @forward(%adj: tensor<8x8xf32, #CSR>, %x: tensor<8x6xf32>) -> tensor<8x4xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %weight = arith.constant dense_resource<__elided__> : tensor<4x6xf32, #CSR>
    %bias = arith.constant dense<[5.000000e-01, -2.500000e-01, 1.250000e-01, -1.000000e+00]> : tensor<4xf32>
    %0 = tensor.empty() : tensor<6x4xf32>
    %transposed = linalg.transpose ins(%weight : tensor<4x6xf32, #CSR>) outs(%0 : tensor<6x4xf32>) permutation = [1, 0]
    %1 = tensor.empty() : tensor<8x4xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %3 = linalg.matmul ins(%x, %transposed : tensor<8x6xf32>, tensor<6x4xf32>) outs(%2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %4 = linalg.matmul ins(%adj, %3 : tensor<8x8xf32, #CSR>, tensor<8x4xf32>) outs(%2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%4, %bias : tensor<8x4xf32>, tensor<4xf32>) outs(%1 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %7 = arith.addf %in, %in_0 : f32
      linalg.yield %7 : f32
    } -> tensor<8x4xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<8x4xf32>) outs(%1 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.cmpf ugt, %in, %cst : f32
      %8 = arith.select %7, %in, %cst : f32
      linalg.yield %8 : f32
    } -> tensor<8x4xf32>
    return %6 : tensor<8x4xf32>
  }
}
