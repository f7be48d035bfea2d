// Named linalg ops beside matmul and transpose: elementwise add and exp, a reduce, matvec,
// batch_matmul and a map, each read through its indexing maps and its region.
func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %v: tensor<3xf32>, %c: tensor<2x4x3xf32>, %d: tensor<2x3x5xf32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x5xf32>, tensor<4x3xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %s = linalg.add ins(%a, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %x = linalg.exp ins(%s : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x3xf32>) outs(%f1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %t = arith.addf %in, %init : f32
      linalg.yield %t : f32
    }
  %mv = linalg.matvec ins(%a, %v : tensor<4x3xf32>, tensor<3xf32>) outs(%f1 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<2x4x5xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %bm = linalg.batch_matmul ins(%c, %d : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%f3 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %mp = linalg.map { math.rsqrt } ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  return %x, %r, %mv, %bm, %mp : tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x5xf32>, tensor<4x3xf32>
}
