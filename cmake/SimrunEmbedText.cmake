# A text resource (e.g. CUDA C++ compiled at run time) kept as a file of its own language and
# built into a library as a string.
#
# Included: simrun_embed_text(TARGET RESOURCE SYMBOL) adds to TARGET a generated source that
# defines `extern const char* const SYMBOL` (SYMBOL qualified, e.g. simrun::framework::text) as
# RESOURCE's bytes, made again at build time whenever RESOURCE changes.
# Run as a script (cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P this file): writes OUTPUT, only
# where its text changes, so an unchanged resource recompiles nothing.
if(CMAKE_SCRIPT_MODE_FILE)
    file(READ "${INPUT}" text)
    set(delimiter "simrun_text")
    string(FIND "${text}" ")${delimiter}\"" clash)
    if(NOT clash EQUAL -1)
        message(FATAL_ERROR "${INPUT} holds )${delimiter}\", which ends the raw string")
    endif()
    string(REGEX MATCH "^(.*)::([^:]+)$" qualified "${SYMBOL}")
    if(NOT qualified)
        message(FATAL_ERROR "SYMBOL '${SYMBOL}' is not qualified by a namespace")
    endif()
    set(namespace "${CMAKE_MATCH_1}")
    set(name "${CMAKE_MATCH_2}")
    file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT [[
// Generated from @INPUT@ by cmake/SimrunEmbedText.cmake at build time; do not edit.
namespace @namespace@ {
extern const char* const @name@;
const char* const @name@ = R"@delimiter@(@text@)@delimiter@";
}  // namespace @namespace@
]] @ONLY)
    return()
endif()

function(simrun_embed_text target resource symbol)
    get_filename_component(input "${resource}" ABSOLUTE)
    get_filename_component(stem "${resource}" NAME_WE)
    set(output "${CMAKE_CURRENT_BINARY_DIR}/generated/${stem}_text.cpp")
    add_custom_command(
        OUTPUT "${output}"
        COMMAND "${CMAKE_COMMAND}" -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
                -P "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
        DEPENDS "${input}" "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
        COMMENT "Embedding ${resource}"
        VERBATIM)
    target_sources(${target} PRIVATE "${output}" "${input}")
endfunction()
