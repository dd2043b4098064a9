func.func @f() {
  %0 = tessel.frob
}
