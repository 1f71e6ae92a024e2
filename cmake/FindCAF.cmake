# Debian's libcaf-dev (0.17.x) ships neither a CMake package nor a pkg-config file, so we find it here.
# Creates CAF::core. (rmbus does its networking with ZeroMQ and needs no CAF::io.)
find_path(CAF_INCLUDE_DIR caf/config.hpp)
find_library(CAF_CORE_LIBRARY caf_core)

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_version "${_caf_version_line}")
  math(EXPR CAF_VERSION_MAJOR "${_caf_version} / 10000")
  math(EXPR CAF_VERSION_MINOR "(${_caf_version} / 100) % 100")
  math(EXPR CAF_VERSION_PATCH "${_caf_version} % 100")
  set(CAF_VERSION "${CAF_VERSION_MAJOR}.${CAF_VERSION_MINOR}.${CAF_VERSION_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_CORE_LIBRARY CAF_INCLUDE_DIR VERSION_VAR CAF_VERSION)

if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core SHARED IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY)
