// Row softmax of a matrix from five generics: a max reduction (arith.maxnumf from a
// fill of -inf), the shift (subf against the row maximum broadcast through (d0, 0)),
// exp, a sum reduction and the division, on 8x1 row statistics as torch-mlir writes them.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
module attributes {torch.debug_module_name = "Softmax"} {
  func.func @forward(%scores: tensor<8x5xf32>) -> tensor<8x5xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %0 = tensor.empty() : tensor<8x1xf32>
    %1 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %rowmax = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%scores : tensor<8x5xf32>) outs(%1 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maxnumf %in, %out : f32
      linalg.yield %m : f32
    } -> tensor<8x1xf32>
    %2 = tensor.empty() : tensor<8x5xf32>
    %shifted = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%scores, %rowmax : tensor<8x5xf32>, tensor<8x1xf32>) outs(%2 : tensor<8x5xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %d = arith.subf %in, %in_0 : f32
      linalg.yield %d : f32
    } -> tensor<8x5xf32>
    %exps = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%shifted : tensor<8x5xf32>) outs(%2 : tensor<8x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
    } -> tensor<8x5xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %rowsum = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%exps : tensor<8x5xf32>) outs(%3 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<8x1xf32>
    %probs = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%exps, %rowsum : tensor<8x5xf32>, tensor<8x1xf32>) outs(%2 : tensor<8x5xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %q = arith.divf %in, %in_0 : f32
      linalg.yield %q : f32
    } -> tensor<8x5xf32>
    return %probs : tensor<8x5xf32>
  }
}
