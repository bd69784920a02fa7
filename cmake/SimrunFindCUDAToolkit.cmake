# simrun_find_cuda_toolkit([args of find_package...]): find_package(CUDAToolkit) on every CMake
# this project accepts, with every CUDA toolkit.
#
# CMake 3.25's FindCUDAToolkit (Debian 12 ships 3.25.1) marks CUDA::nvToolsExt deprecated whenever
# the project requires CMake >= 3.25, without checking that the target exists. CUDA 12.9 and later
# ship no libnvToolsExt, so the target is never made and configure stops with "set_property could
# not find TARGET CUDA::nvToolsExt". Later CMake checks the target first. The module reads
# CMAKE_MINIMUM_REQUIRED_VERSION only for that deprecation note (simrun uses neither nvToolsExt
# nor nvtx3), so on 3.25 the variable is lowered for this one call and restored after it; the
# policies set by cmake_minimum_required are untouched. A macro, so the module's results
# (CUDAToolkit_FOUND, CUDAToolkit_VERSION, ...) land in the caller's scope.
macro(simrun_find_cuda_toolkit)
    if(CMAKE_VERSION VERSION_LESS 3.26)
        set(_simrun_minimum_required_version "${CMAKE_MINIMUM_REQUIRED_VERSION}")
        set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
        find_package(CUDAToolkit ${ARGN})
        set(CMAKE_MINIMUM_REQUIRED_VERSION "${_simrun_minimum_required_version}")
        unset(_simrun_minimum_required_version)
    else()
        find_package(CUDAToolkit ${ARGN})
    endif()
endmacro()
