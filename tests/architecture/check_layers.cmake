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
#     python/src/ the front end alone (never app/commands/ or app/bench/).
# cmake -DSOURCE_DIR=<the checkout> -P check_layers.cmake; exits non-zero listing each breach.
set(ORDER_solvers base system boxes matrices kernels distributed preconditioners methods multigrid
    selection)
set(ORDER_framework config discretisation distributed problem time output run)

set(breaches "")
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
        file(STRINGS ${SOURCE_DIR}/${library}/${file} includes REGEX "^#include \"")
        foreach(line ${includes})
            string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
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
# a file always includes beside itself ("name.hpp") and the libraries' public headers.
set(REACHES_app_front_end front_end)
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
        file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^#include \"")
        foreach(line ${includes})
            string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
            if(included STREQUAL "simrun/version.hpp")
                continue()  # generated
            elseif(included MATCHES "^simrun/(solvers|framework)/")
                if(NOT EXISTS ${SOURCE_DIR}/${CMAKE_MATCH_1}/include/${included})
                    list(APPEND breaches "${file}: includes ${included}, not a public header")
                endif()
            elseif(included MATCHES "^([^/]+)/")
                list(FIND REACHES_${folder_key} ${CMAKE_MATCH_1} reach)
                if(reach EQUAL -1)
                    list(APPEND breaches
                         "${file}: includes ${included} (${folder}/ may include from: "
                         "${REACHES_${folder_key}})")
                endif()
            elseif(NOT EXISTS ${SOURCE_DIR}/${folder}/${included})
                list(APPEND breaches "${file}: includes ${included}, not beside it")
            endif()
        endforeach()
    endforeach()
endforeach()
# The Python module builds and links nothing of the executable's commands or benchmark.
file(STRINGS ${SOURCE_DIR}/python/CMakeLists.txt python_build REGEX "commands/|simrun_bench|bench/")
foreach(line ${python_build})
    list(APPEND breaches "python/CMakeLists.txt: reaches the executable's code: ${line}")
endforeach()

if(breaches)
    list(JOIN breaches "\n  " text)
    message(FATAL_ERROR "architecture: includes against the layering:\n  ${text}")
endif()
message(STATUS "architecture: every include points down or sideways")
