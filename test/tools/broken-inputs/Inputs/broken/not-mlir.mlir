this is not an MLIR file
