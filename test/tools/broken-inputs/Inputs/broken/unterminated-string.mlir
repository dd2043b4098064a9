tessel.mesh @m ["dp=2]
