# Installs a troupe build tree into a fresh prefix and builds and runs tests/install/consumer
# against it, through find_package(troupe) and through pkg-config. Each step is named; the first
# that fails stops the script with its command and output.
#
#   cmake -DBUILD_DIR=<troupe build tree> -DSOURCE_DIR=<tests/install/consumer>
#         -DWORK_DIR=<scratch folder, emptied first>
#         [-DCONFIG=Release] [-DGENERATOR=...] [-DCXX_COMPILER=g++] [-DSANITIZE=address,undefined]
#         [-DPKG_CONFIG=pkg-config] -P run_consumer.cmake
cmake_minimum_required(VERSION 3.20)

foreach(required BUILD_DIR SOURCE_DIR WORK_DIR)
  if("${${required}}" STREQUAL "")
    message(FATAL_ERROR "install_consumer: expected -D${required}=<path>, found none")
  endif()
endforeach()
if("${CXX_COMPILER}" STREQUAL "")
  set(CXX_COMPILER c++)
endif()
if("${PKG_CONFIG}" STREQUAL "")
  set(PKG_CONFIG pkg-config)
endif()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/cmake-build")
set(expected_output "troupe consumer: 1 + 2 = 3")

# Objects built with sanitizers need the sanitizer runtimes at link time.
set(sanitize_flags "")
if(NOT "${SANITIZE}" STREQUAL "")
  set(sanitize_flags "-fsanitize=${SANITIZE} -fno-omit-frame-pointer")
endif()

# step(<name> <command>...): runs the command; on failure stops with the step named.
# Leaves the command's output in step_output.
function(step name)
  list(JOIN ARGN " " shown)
  message(STATUS "install_consumer: ${name}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result STREQUAL "0")
    message(FATAL_ERROR "install_consumer: step '${name}' failed (exit status: ${result})\n"
                        "  command: ${shown}\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

# fail(<name> <message>...): stops with the step named.
function(fail name)
  string(JOIN "" text ${ARGN})
  message(FATAL_ERROR "install_consumer: step '${name}' failed: ${text}")
endfunction()

# run_consumer(<name> <executable>): runs it and checks what it prints.
function(run_consumer name executable)
  step("${name}" "${executable}")
  string(STRIP "${step_output}" printed)
  message(STATUS "install_consumer: ${name} printed: ${printed}")
  string(FIND "${step_output}" "${expected_output}" at)
  if(at EQUAL -1)
    fail("${name}" "expected '${expected_output}' in its output, found:\n${step_output}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# (a) Install into a fresh prefix.
set(config_args "")
if(NOT "${CONFIG}" STREQUAL "")
  set(config_args --config "${CONFIG}")
endif()
step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})
if(NOT EXISTS "${prefix}/include/troupe/troupe.hpp")
  fail("install" "expected ${prefix}/include/troupe/troupe.hpp, found no such file")
endif()

# (b) The CMake consumer: find_package(troupe) + troupe::troupe.
set(configure_args -S "${SOURCE_DIR}" -B "${consumer_build}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${sanitize_flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${sanitize_flags}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(NOT "${GENERATOR}" STREQUAL "")
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(NOT "${CONFIG}" STREQUAL "")
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
step("cmake configure consumer" "${CMAKE_COMMAND}" ${configure_args})

# It must have found the troupe just installed, not one elsewhere on the system.
file(STRINGS "${consumer_build}/CMakeCache.txt" found_at REGEX "^troupe_DIR:")
string(REGEX REPLACE "^troupe_DIR:[A-Z]*=" "" found_at "${found_at}")
file(REAL_PATH "${found_at}" found_at)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${found_at}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  fail("cmake configure consumer" "expected troupe under ${prefix}, found it at ${found_at}")
endif()

step("cmake build consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})
set(cmake_consumer "")
foreach(candidate "${consumer_build}/troupe_consumer" "${consumer_build}/${CONFIG}/troupe_consumer")
  if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
    set(cmake_consumer "${candidate}")
    break()
  endif()
endforeach()
if(cmake_consumer STREQUAL "")
  fail("cmake build consumer" "expected the program troupe_consumer in ${consumer_build}, found none")
endif()
run_consumer("run cmake consumer" "${cmake_consumer}")

# (c) The same source with the compiler alone, flags from pkg-config.
file(GLOB_RECURSE pc_files "${prefix}/*/pkgconfig/troupe.pc")
list(LENGTH pc_files pc_count)
if(NOT pc_count EQUAL 1)
  fail("pkg-config" "expected one troupe.pc under ${prefix}, found ${pc_count}: ${pc_files}")
endif()
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}:$ENV{PKG_CONFIG_PATH}")
else()
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
endif()

step("pkg-config" "${PKG_CONFIG}" --variable=includedir troupe)
string(STRIP "${step_output}" pc_includedir)
if(NOT EXISTS "${pc_includedir}/troupe/troupe.hpp")
  fail("pkg-config" "troupe.pc in ${pc_dir} says includedir=${pc_includedir}, but the headers "
       "were installed in ${prefix}/include: expected troupe.pc to follow the prefix given to "
       "cmake --install (relative to \${pcfiledir}), found the configure-time prefix")
endif()
step("pkg-config" "${PKG_CONFIG}" --cflags --libs troupe)
string(STRIP "${step_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${sanitize_flags}")

set(pc_consumer "${WORK_DIR}/pkg-config-consumer")
step("pkg-config build consumer" "${CXX_COMPILER}" ${extra_flags} "${SOURCE_DIR}/main.cpp"
     -o "${pc_consumer}" ${pc_flags})
run_consumer("run pkg-config consumer" "${pc_consumer}")

message(STATUS "install_consumer: all steps passed (prefix ${prefix})")
