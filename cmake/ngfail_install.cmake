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

# pkg-config: one file per library, each requiring the parts it builds on (so http-only code
# links no OpenSSL), and ngfail.pc for every library but the emulator (as ngfail::ngfail).
# Relocatable: the prefix is found from the .pc file's own place, so --prefix works. Cflags
# carry -std=c++20 (g++ 12 defaults to C++17).
file(RELATIVE_PATH NGFAIL_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
# library | what it requires | its own libraries | its own flags | what it is
# The emulator's flag keeps it in <ngfail/opensandbox.hpp> for its users, for one release (#42).
set(ngfail_pc_parts
    "core||-lngfail_core||kinds, events, failures, results"
    "wire|ngfail-core|-lngfail_wire -lboost_json||reports, JSON, the X-NG-Failure-Report header, SSE reports"
    "retry|ngfail-wire|-lngfail_retry||retry allowances: one budget per logical request"
    "policy|ngfail-wire ngfail-retry|-lngfail_policy -lyaml-cpp||the outcome policy: decisions, policy files, rollout views"
    "http|ngfail-wire|-lngfail_http||Boost.Beast helpers for the failure header"
    "opensandbox|ngfail-core|-lngfail_opensandbox||the OpenSandbox evidence classifier"
    "opensandbox_client|ngfail-opensandbox ngfail-retry|-lngfail_opensandbox_client -lssl -lcrypto||the OpenSandbox client"
    "opensandbox_emulator|ngfail-wire ngfail-opensandbox|-lngfail_opensandbox_emulator -lssl -lcrypto| -DNGFAIL_WITH_OPENSANDBOX_EMULATOR|the local OpenSandbox behind ngfail serve (a test tool)"
    "|ngfail-http ngfail-policy ngfail-opensandbox-client|||every library but the emulator")
if(NGFAIL_HAS_OTEL)
    list(APPEND ngfail_pc_parts
        "otel|ngfail-opensandbox-client opentelemetry_api|-lngfail_otel||OpenTelemetry spans and metrics for the client")
endif()
foreach(part IN LISTS ngfail_pc_parts)
    string(REPLACE "|" ";" fields "${part}")
    list(GET fields 0 library)
    list(GET fields 1 PC_REQUIRES)
    list(GET fields 2 PC_LIBS)
    list(GET fields 3 PC_CFLAGS)
    list(GET fields 4 what)
    if(library STREQUAL "")
        set(PC_NAME ngfail)
    else()
        string(REPLACE "_" "-" PC_NAME "ngfail-${library}")
    endif()
    set(PC_DESCRIPTION "${PROJECT_DESCRIPTION}: ${what}")
    configure_file(cmake/ngfail-part.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${PC_NAME}.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${PC_NAME}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
