# The architecture's one-way dependencies (docs/architecture.md), checked on every source:
#   - problems -> framework -> solvers: the solver layer includes nothing of the framework or
#     the problems, the framework nothing of the problems;
#   - inside each library a file includes only from its own folder or one below it, in the
#     order ORDER_<library> lists the folders;
#   - installed (public) headers include only public headers: no back-end internals;
#   - the executable (app/) and the Python module (python/src/) reach the libraries through
#     their public headers only, and each other through the front end: app/front_end/ includes
#     nothing of app/ but itself, app/commands/ the front end and the benchmark harness's
#     entry, app/bench/ the front end, app/'s own sources (main.cpp) the commands, and
#     python/src/ the front end alone (never app/commands/ or app/bench/);
#   - the front end is built from its folder alone and links nothing of the executable, and its
#     include root (front_end/include) holds front_end/ alone, so that what links it reaches
#     nothing else of app/; the Python module builds and links nothing of the executable.
# Both `#include "..."` and `#include <...>` of the project's paths are checked.
# cmake -DSOURCE_DIR=<the checkout> -P check_layers.cmake; exits non-zero listing each breach.
set(ORDER_solvers base system boxes matrices kernels distributed preconditioners methods multigrid
    selection)
set(ORDER_framework config discretisation distributed problem time output run)

set(breaches "")

# The project includes of `file` (relative to SOURCE_DIR) into `out`: every `#include "..."`,
# and every `#include <...>` whose path starts with simrun/ or one of `folders` (a system or
# third-party header is none of them).
function(project_includes file folders out)
    file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "^#include [\"<]")
    set(result "")
    foreach(line ${lines})
        string(REGEX REPLACE "^#include [\"<]([^\">]+)[\">].*" "\\1" included "${line}")
        if(line MATCHES "^#include <")
            set(project FALSE)
            if(included MATCHES "^simrun/")
                set(project TRUE)
            elseif(included MATCHES "^([^/]+)/")
                list(FIND folders ${CMAKE_MATCH_1} at)
                if(NOT at EQUAL -1)
                    set(project TRUE)
                endif()
            endif()
            if(NOT project)
                continue()
            endif()
        endif()
        list(APPEND result "${included}")
    endforeach()
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

foreach(library solvers framework)
    set(order ${ORDER_${library}})
    file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}/${library}
         ${SOURCE_DIR}/${library}/src/* ${SOURCE_DIR}/${library}/include/*)
    foreach(file ${files})
        if(NOT file MATCHES "\\.(hpp|cpp|cu|cuh)$")
            continue()
        endif()
        if(file MATCHES "^include/simrun/${library}/([^/]+)/")
            set(public TRUE)
        elseif(file MATCHES "^src/([^/]+)/")
            set(public FALSE)
        else()
            list(APPEND breaches "${library}/${file}: outside the library's folders")
            continue()
        endif()
        set(folder ${CMAKE_MATCH_1})
        list(FIND order ${folder} rank)
        if(rank EQUAL -1)
            list(APPEND breaches "${library}/${file}: folder '${folder}' is not in the order")
            continue()
        endif()
        project_includes(${library}/${file} "${order}" includes)
        foreach(included ${includes})
            set(target "")
            if(included MATCHES "^simrun/(framework|problems)/")
                if(library STREQUAL "solvers" OR CMAKE_MATCH_1 STREQUAL "problems")
                    list(APPEND breaches "${library}/${file}: includes ${included} (a layer above)")
                endif()
                continue()
            elseif(included MATCHES "^simrun/${library}/([^/]+)/")
                set(target ${CMAKE_MATCH_1})
            elseif(included MATCHES "^simrun/")
                continue()  # generated (simrun/version.hpp) or another library's
            else()
                if(public)
                    list(APPEND breaches
                         "${library}/${file}: a public header includes the internal ${included}")
                endif()
                if(included MATCHES "^([^/]+)/")
                    set(target ${CMAKE_MATCH_1})
                else()
                    continue()  # beside the file, in its own folder
                endif()
            endif()
            list(FIND order ${target} target_rank)
            if(target_rank GREATER rank)
                list(APPEND breaches
                     "${library}/${file}: ${folder}/ includes ${included} from ${target}/, above it")
            endif()
        endforeach()
    endforeach()
endforeach()

# The folders of app/ that each front-end folder may include from (`#include "FOLDER/..."`);
# a file always includes beside itself ("name.hpp") and the libraries' public headers. The front
# end's headers lie in its include root (front_end/include/front_end/), its sources in src/.
set(APP_FOLDERS app python front_end commands bench solvers framework problems)
set(REACHES_app_front_end_include_front_end front_end)
set(REACHES_app_front_end_src front_end)
set(REACHES_app_commands front_end commands bench)
set(REACHES_app_bench front_end bench)
set(REACHES_app commands front_end bench)  # main.cpp and the executable's operator new
set(REACHES_python_src front_end)
foreach(front app python)
    file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${front}/*)
    foreach(file ${files})
        if(NOT file MATCHES "\\.(hpp|cpp|cu|cuh)$")
            continue()
        endif()
        get_filename_component(folder ${file} DIRECTORY)
        string(REPLACE "/" "_" folder_key "${folder}")
        if(NOT DEFINED REACHES_${folder_key})
            list(APPEND breaches "${file}: folder '${folder}/' has no place in the front ends")
            continue()
        endif()
        project_includes(${file} "${APP_FOLDERS}" includes)
        foreach(included ${includes})
            if(included STREQUAL "simrun/version.hpp")
                continue()  # generated
            elseif(included MATCHES "^simrun/(solvers|framework)/")
                if(NOT EXISTS ${SOURCE_DIR}/${CMAKE_MATCH_1}/include/${included})
                    list(APPEND breaches "${file}: includes ${included}, not a public header")
                endif()
            elseif(included MATCHES "^([^/]+)/")
                list(FIND REACHES_${folder_key} ${CMAKE_MATCH_1} reach)
                if(reach EQUAL -1)
                    list(JOIN REACHES_${folder_key} ", " reaches)
                    list(APPEND breaches
                         "${file}: includes ${included} (${folder}/ may include from: ${reaches})")
                endif()
            elseif(NOT EXISTS ${SOURCE_DIR}/${folder}/${included})
                list(APPEND breaches "${file}: includes ${included}, not beside it")
            endif()
        endforeach()
    endforeach()
endforeach()

# The arguments of every call `command(target ...)` in a CMakeLists.txt's text, as one list.
function(call_arguments text command target out)
    string(REGEX MATCHALL "${command}\\(${target}[ \t\r\n][^)]*\\)" calls "${text}")
    set(result "")
    foreach(call ${calls})
        string(REGEX REPLACE "^${command}\\(${target}[ \t\r\n]+" "" call "${call}")
        string(REGEX REPLACE "[ \t\r\n]*\\)$" "" call "${call}")
        string(REGEX REPLACE "[ \t\r\n]+" ";" call "${call}")
        list(APPEND result ${call})
    endforeach()
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

# The front end: its sources in front_end/, its include root front_end/include alone, and
# nothing of the executable linked.
file(READ ${SOURCE_DIR}/app/CMakeLists.txt app_build)
set(keywords STATIC SHARED OBJECT PUBLIC PRIVATE INTERFACE SYSTEM BEFORE AFTER)
call_arguments("${app_build}" add_library simrun_front_end library)
if(NOT library)
    list(APPEND breaches "app/CMakeLists.txt: no add_library(simrun_front_end ...)")
endif()
call_arguments("${app_build}" target_sources simrun_front_end sources)
foreach(source ${library} ${sources})
    list(FIND keywords ${source} keyword)
    if(keyword EQUAL -1 AND
       NOT source MATCHES "^(\\$\\{CMAKE_CURRENT_SOURCE_DIR\\}/)?front_end/")
        list(APPEND breaches
             "app/CMakeLists.txt: simrun_front_end builds ${source}, outside front_end/")
    endif()
endforeach()
call_arguments("${app_build}" target_include_directories simrun_front_end roots)
foreach(root ${roots})
    list(FIND keywords ${root} keyword)
    if(keyword EQUAL -1 AND NOT root MATCHES "/front_end/include$")
        list(APPEND breaches
             "app/CMakeLists.txt: simrun_front_end's include root ${root} is not front_end/include")
    endif()
endforeach()
call_arguments("${app_build}" target_link_libraries simrun_front_end links)
foreach(link ${links})
    if(link MATCHES "commands|bench|^simrun$")
        list(APPEND breaches
             "app/CMakeLists.txt: simrun_front_end links the executable's ${link}")
    endif()
endforeach()

# The Python module builds and links nothing of the executable's commands or benchmark, and
# puts nothing of app/ but the front end (which it links) on its include path.
file(STRINGS ${SOURCE_DIR}/python/CMakeLists.txt python_build)
foreach(line ${python_build})
    if(line MATCHES "^[ \t]*#")
        continue()
    endif()
    if(line MATCHES "commands|simrun_bench|bench/|(^|[^A-Za-z0-9_])app([^A-Za-z0-9_]|$)")
        list(APPEND breaches "python/CMakeLists.txt: reaches the executable's code: ${line}")
    endif()
endforeach()

if(breaches)
    list(JOIN breaches "\n  " text)
    message(FATAL_ERROR "architecture: includes against the layering:\n  ${text}")
endif()
message(STATUS "architecture: every include points down or sideways")
