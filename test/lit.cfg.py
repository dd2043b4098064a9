# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TESSEL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "fuzz_broken_inputs.py", "check_partition.py", "check_propagation.py",
                   "grad_check.py", "train_step_check.py", "check_compiled.py",
                   "regressions", "damage_checkpoint.py", "check_trace.py", "compare_saved.py", "compare_losses.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessel_obj_root, "test")

# Match variables across CHECK-LABEL blocks only where intended.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.tessel_tools_dir, config.llvm_tools_dir]
tools = [
    "tessel-opt",
    "tessel-interp",
    "tessel-models",
    "tessel-compile",
    "tessel-run",
    "tessel-tokenize",
    "tessel-generate",
    "tessel-export",
    "tessel-plan",
    "tessel-comm-check",
    ToolSubst("tessel-cuda-info", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
config.substitutions.append(("%tessel_src", config.tessel_src_root))
config.substitutions.append(("%tessel_bin", config.tessel_tools_dir))
config.substitutions.append(("%tessel_build", config.tessel_obj_root))
config.substitutions.append(("%PYTHON", sys.executable))
# For tests that build C++ against LLVM's headers (test/sdk).
config.substitutions.append(("%cxx", config.cxx))
config.substitutions.append(("%cc", config.cc))
config.substitutions.append(
    ("%llvm_include", os.path.join(config.llvm_tools_dir, "..", "include")))

# Programs run under mpirun where the runtime has MPI and mpirun exists.
import shutil
if config.tessel_have_mpi and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))

if config.tessel_have_cuda:
    config.available_features.add("cuda")
    if config.tessel_nvcc and os.path.exists(config.tessel_nvcc):
        config.available_features.add("nvcc")
        config.substitutions.append(("%nvcc", config.tessel_nvcc))
    # A GPU to run on (tests that need one are unsupported elsewhere).
    import subprocess
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          timeout=20).returncode == 0:
            config.available_features.add("gpu")
    except (OSError, subprocess.TimeoutExpired):
        pass

# The host's architecture, for tests of --cpu names.
import platform
config.available_features.add("arch-" + platform.machine())
