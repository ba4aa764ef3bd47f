# `cmake --install` layout: headers, libraries, the CLI, a CMake package and a pkg-config file.
include(CMakePackageConfigHelpers)

set(NGFAIL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ngfail)
get_property(ngfail_libraries GLOBAL PROPERTY NGFAIL_LIBRARIES)

install(TARGETS ${ngfail_libraries} ngfail_all EXPORT ngfailTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/ngfail DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ngfailTargets NAMESPACE ngfail:: DESTINATION ${NGFAIL_CMAKE_DIR})
if(TARGET ngfail)
    install(TARGETS ngfail RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(cmake/ngfailConfig.cmake.in
    ${PROJECT_BINARY_DIR}/ngfailConfig.cmake
    INSTALL_DESTINATION ${NGFAIL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ngfailConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/ngfailConfig.cmake
    ${PROJECT_BINARY_DIR}/ngfailConfigVersion.cmake
    DESTINATION ${NGFAIL_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place, so --prefix works.
file(RELATIVE_PATH NGFAIL_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
# Static libraries list dependents first.
set(NGFAIL_PC_LIBS "")
foreach(library IN LISTS ngfail_libraries)
    string(PREPEND NGFAIL_PC_LIBS "-l${library} ")
endforeach()
configure_file(cmake/ngfail.pc.in ${PROJECT_BINARY_DIR}/ngfail.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ngfail.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
