# Generates the C++ parser from grammar/*.g4 at build time (antlr4 4.7.2 tool, 4.9 runtime).
find_package(Java REQUIRED COMPONENTS Runtime)
set(ANTLR_JAR /usr/share/java/antlr4.jar CACHE FILEPATH "antlr4 tool jar")
set(ANTLR_CP "/usr/share/java/stringtemplate4.jar:${ANTLR_JAR}:/usr/share/java/antlr4-runtime.jar:/usr/share/java/antlr3-runtime.jar:/usr/share/java/treelayout.jar")
set(ANTLR_GRAMMAR ${CMAKE_SOURCE_DIR}/grammar/Gpubt.g4)
set(ANTLR_OUT ${CMAKE_BINARY_DIR}/generated/gpubt_parse)
set(ANTLR_GENERATED
  ${ANTLR_OUT}/GpubtLexer.cpp ${ANTLR_OUT}/GpubtParser.cpp
  ${ANTLR_OUT}/GpubtBaseVisitor.cpp ${ANTLR_OUT}/GpubtVisitor.cpp)
add_custom_command(
  OUTPUT ${ANTLR_GENERATED}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ANTLR_OUT}
  COMMAND ${Java_JAVA_EXECUTABLE} -cp ${ANTLR_CP} org.antlr.v4.Tool -Dlanguage=Cpp -visitor -no-listener
          -package gpubt_parse -o ${ANTLR_OUT} -Xexact-output-dir ${ANTLR_GRAMMAR}
  DEPENDS ${ANTLR_GRAMMAR}
  COMMENT "antlr4: generating the gpubt parser")
add_library(gpubt_antlr STATIC ${ANTLR_GENERATED})
target_include_directories(gpubt_antlr SYSTEM PUBLIC ${ANTLR_OUT} /usr/include/antlr4-runtime)
target_link_libraries(gpubt_antlr PUBLIC antlr4-runtime)
target_compile_options(gpubt_antlr PRIVATE -w -fno-char8_t) # antlr 4.7.2 emits u8"" literals

# frontend/parse is the only code that sees the generated parser.
file(GLOB GPUBT_PARSE_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/frontend/parse/*.cpp)
add_library(gpubt_parse STATIC ${GPUBT_PARSE_SRCS})
target_include_directories(gpubt_parse PUBLIC ${CMAKE_SOURCE_DIR})
# The parser builds the syntax tree (gpubt_ast) and asks the builtin and function tables
# (gpubt_stdlib) which names are calls; it needs no semantic pass.
target_link_libraries(gpubt_parse PRIVATE gpubt_antlr PUBLIC gpubt_ast gpubt_stdlib fmt::fmt)
