# GPUBT_STATIC_LLVM=ON: a gpubt that runs on machines without LLVM, libbpf or the ANTLR runtime
# (a GPU node): LLVM components, libbpf, libelf, libdw, zlib, zstd and antlr4-runtime linked from .a.
option(GPUBT_STATIC_LLVM "Link LLVM, libbpf, libelf and antlr4-runtime statically" OFF)
if(NOT GPUBT_STATIC_LLVM)
  return()
endif()
set(LLVM_LINK_LLVM_DYLIB OFF) # gpubt_llvm then links the component archives
foreach(lib bpf dw elf z zstd bz2 lzma antlr4-runtime)
  find_library(GPUBT_STATIC_${lib} NAMES lib${lib}.a REQUIRED)
endforeach()
set_target_properties(PkgConfig::LIBBPF PROPERTIES INTERFACE_LINK_LIBRARIES
  "${GPUBT_STATIC_bpf};${GPUBT_STATIC_elf};${GPUBT_STATIC_z};${GPUBT_STATIC_zstd}")
set_target_properties(PkgConfig::LIBELF PROPERTIES INTERFACE_LINK_LIBRARIES
  "${GPUBT_STATIC_elf};${GPUBT_STATIC_z};${GPUBT_STATIC_zstd}")
set_target_properties(PkgConfig::LIBDW PROPERTIES INTERFACE_LINK_LIBRARIES
  "${GPUBT_STATIC_dw};${GPUBT_STATIC_elf};${GPUBT_STATIC_z};${GPUBT_STATIC_zstd};${GPUBT_STATIC_bz2};${GPUBT_STATIC_lzma}")
set_target_properties(PkgConfig::LIBZSTD PROPERTIES INTERFACE_LINK_LIBRARIES "${GPUBT_STATIC_zstd}")
add_library(antlr4-runtime STATIC IMPORTED)
set_target_properties(antlr4-runtime PROPERTIES IMPORTED_LOCATION ${GPUBT_STATIC_antlr4-runtime})
