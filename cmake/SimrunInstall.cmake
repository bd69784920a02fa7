# cmake --install: the libraries, their public headers, the generated version header, the simrun
# executable and a CMake package, so that an outside project writes
#   find_package(simrun REQUIRED)                        # or COMPONENTS solvers
#   target_link_libraries(app PRIVATE simrun::solvers)   # the solver layer alone
#   target_link_libraries(app PRIVATE simrun::framework simrun::problems)
# Two export sets: simrun::solvers needs only OpenMP (and the CUDA runtime when built with it);
# the framework and the problems add toml++, muParser, HDF5, libpng, zlib and LZ4, which the
# package looks for only when those components are asked for.
include(CMakePackageConfigHelpers)
set(SIMRUN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/simrun)

install(TARGETS simrun_solvers EXPORT simrunSolversTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS simrun_framework simrun_problems EXPORT simrunFrameworkTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/simrun-problems)
install(TARGETS simrun RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY solvers/include/ framework/include/ ${PROJECT_BINARY_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")

install(EXPORT simrunSolversTargets NAMESPACE simrun:: DESTINATION ${SIMRUN_INSTALL_CMAKEDIR})
install(EXPORT simrunFrameworkTargets NAMESPACE simrun:: DESTINATION ${SIMRUN_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/simrunConfig.cmake.in
    ${PROJECT_BINARY_DIR}/simrunConfig.cmake INSTALL_DESTINATION ${SIMRUN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/simrunConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/simrunConfig.cmake ${PROJECT_BINARY_DIR}/simrunConfigVersion.cmake
              cmake/SimrunFindCUDAToolkit.cmake
        DESTINATION ${SIMRUN_INSTALL_CMAKEDIR})
