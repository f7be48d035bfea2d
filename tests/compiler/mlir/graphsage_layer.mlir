// One GraphSAGE layer with the mean aggregator, relu(X · Wsᵀ + Â · (X · Wnᵀ) + b):
// Â (the row-normalised adjacency) is CSR, the two projections are elided constants,
// the three-way sum is one generic and relu is arith.maxnumf with 0.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<(d0, d1) -> (d1, d0)>
module attributes {torch.debug_module_name = "SAGELayer"} {
  func.func @forward(%adj: tensor<10x10xf32, #CSR>, %x: tensor<10x6xf32>) -> tensor<10x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %w_self = arith.constant dense_resource<__elided__> : tensor<3x6xf32>
    %w_neigh = arith.constant dense_resource<__elided__> : tensor<3x6xf32>
    %bias = arith.constant dense_resource<__elided__> : tensor<3xf32>
    %0 = tensor.empty() : tensor<6x3xf32>
    %ws_t = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%w_self : tensor<3x6xf32>) outs(%0 : tensor<6x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x3xf32>
    %wn_t = linalg.transpose ins(%w_neigh : tensor<3x6xf32>) outs(%0 : tensor<6x3xf32>) permutation = [1, 0]
    %1 = tensor.empty() : tensor<10x3xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<10x3xf32>) -> tensor<10x3xf32>
    %self = linalg.matmul ins(%x, %ws_t : tensor<10x6xf32>, tensor<6x3xf32>) outs(%2 : tensor<10x3xf32>) -> tensor<10x3xf32>
    %neigh = linalg.matmul ins(%x, %wn_t : tensor<10x6xf32>, tensor<6x3xf32>) outs(%2 : tensor<10x3xf32>) -> tensor<10x3xf32>
    %agg = linalg.matmul ins(%adj, %neigh : tensor<10x10xf32, #CSR>, tensor<10x3xf32>) outs(%2 : tensor<10x3xf32>) -> tensor<10x3xf32>
    %out = linalg.generic {indexing_maps = [#map, #map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%self, %agg, %bias : tensor<10x3xf32>, tensor<10x3xf32>, tensor<3xf32>) outs(%1 : tensor<10x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %in_1: f32, %o: f32):
      %s = arith.addf %in, %in_0 : f32
      %t = arith.addf %s, %in_1 : f32
      %r = arith.maxnumf %t, %cst : f32
      linalg.yield %r : f32
    } -> tensor<10x3xf32>
    return %out : tensor<10x3xf32>
  }
}
