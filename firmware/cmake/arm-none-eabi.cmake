# arm-none-eabi.cmake: a CMake toolchain file for the bare-metal Cortex-M
# targets of firmware/targets.txt, with arm-none-eabi-gcc and newlib.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=firmware/cmake/arm-none-eabi.cmake \
#         -DFW_TARGET=m4 -S firmware/common -B build-fw
#
# FW_TARGET names a row of the target table (m4 by default); the row's
# compiler flags become CMAKE_C_FLAGS, and FW_LINKER_SCRIPT, FW_MACHINE,
# FW_CPU, FW_INSTRUCTIONS_PER_TICK and FW_INSTRUCTIONS_PER_TICK_DEN (a tick
# is their quotient in instructions) are set for the project to use. The
# toolchain's own test programs are built as static libraries: nothing
# links without a linker script.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FW_TARGET)

if(NOT FW_TARGET)
  set(FW_TARGET m4)
endif()
get_filename_component(_fw_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
file(STRINGS "${_fw_dir}/targets.txt" _fw_rows REGEX "^${FW_TARGET}[ \t]")
if(NOT _fw_rows)
  message(FATAL_ERROR "arm-none-eabi.cmake: no target '${FW_TARGET}' in ${_fw_dir}/targets.txt")
endif()
list(GET _fw_rows 0 _fw_row)
string(REGEX REPLACE "#.*" "" _fw_row "${_fw_row}")
string(REGEX REPLACE "[ \t]+" ";" _fw_words "${_fw_row}")
list(FILTER _fw_words EXCLUDE REGEX "^$")
list(GET _fw_words 1 FW_MACHINE)
list(GET _fw_words 2 FW_CPU)
list(GET _fw_words 3 FW_INSTRUCTIONS_PER_TICK)
# a fraction N/D where the board's clock does not divide 1 GHz
set(FW_INSTRUCTIONS_PER_TICK_DEN 1)
if(FW_INSTRUCTIONS_PER_TICK MATCHES "^([0-9]+)/([0-9]+)$")
  set(FW_INSTRUCTIONS_PER_TICK ${CMAKE_MATCH_1})
  set(FW_INSTRUCTIONS_PER_TICK_DEN ${CMAKE_MATCH_2})
endif()
list(GET _fw_words 4 _fw_ld)
set(FW_LINKER_SCRIPT "${_fw_dir}/${FW_TARGET}/${_fw_ld}")
list(SUBLIST _fw_words 5 -1 _fw_flags)
string(REPLACE ";" " " _fw_flags "${_fw_flags}")
set(CMAKE_C_FLAGS_INIT "${_fw_flags}")
set(CMAKE_ASM_FLAGS_INIT "${_fw_flags}")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
