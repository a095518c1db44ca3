# FindCUDNN: locates cuDNN 9 headers and libraries and defines the imported target CUDNN::cudnn.
#
# Looks in the CUDA toolkit (/usr/local/cuda: development and CI machines, cuDNN 9.19) and in the
# Debian/Ubuntu multiarch system paths (/usr/include/x86_64-linux-gnu: the GPU machine, cuDNN 9.14).
# Hints: CUDNN_ROOT (cache or environment). Result variables: CUDNN_FOUND, CUDNN_INCLUDE_DIR,
# CUDNN_LIBRARY, CUDNN_VERSION.
include(FindPackageHandleStandardArgs)

set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT})
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _cudnn_hints ${CUDAToolkit_LIBRARY_ROOT})
endif()
list(APPEND _cudnn_hints /usr/local/cuda)

find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include include/x86_64-linux-gnu
  PATHS /usr/include/x86_64-linux-gnu /usr/include)
find_library(CUDNN_LIBRARY cudnn
  HINTS ${_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu
  PATHS /usr/lib/x86_64-linux-gnu /usr/lib)

set(CUDNN_VERSION "")
if(CUDNN_INCLUDE_DIR)
  set(_cudnn_version_header ${CUDNN_INCLUDE_DIR}/cudnn_version.h)
  if(NOT EXISTS ${_cudnn_version_header})
    set(_cudnn_version_header ${CUDNN_INCLUDE_DIR}/cudnn.h)
  endif()
  file(STRINGS ${_cudnn_version_header} _cudnn_defines REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _match "${_cudnn_defines}")
    set(_cudnn_${_part} ${CMAKE_MATCH_1})
  endforeach()
  set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
endif()

find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION ${CUDNN_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
