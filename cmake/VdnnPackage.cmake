# `cmake --install`: libvdnn, its public headers and the package files with which a consumer does
# find_package(vdnn CONFIG REQUIRED) and links vdnn::vdnn; also the `vdnn` command and configs/.
include(CMakePackageConfigHelpers)

set(VDNN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vdnn)

install(TARGETS vdnn_lib EXPORT vdnnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/api/include/vdnn
                  ${PROJECT_BINARY_DIR}/models/api/include/vdnn
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT vdnnTargets NAMESPACE vdnn:: DESTINATION ${VDNN_PACKAGE_DIR})

install(TARGETS vdnn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vdnn/configs)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vdnnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vdnnConfig.cmake INSTALL_DESTINATION ${VDNN_PACKAGE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vdnnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vdnnConfig.cmake ${PROJECT_BINARY_DIR}/vdnnConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FindCUDNN.cmake
  DESTINATION ${VDNN_PACKAGE_DIR})
