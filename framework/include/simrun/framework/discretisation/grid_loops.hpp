#pragma once
// Loops over the nodes of a grid on the OpenMP threads, with results as of a serial loop: each
// thread takes one contiguous block of grid lines (fixed j, k), block b before block b + 1, so
// whatever a block collects, joined in block order, is in node order.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

// Calls body(j, k, block) for every grid line of `box` (fixed j, k; i running over the box's
// part of the line); block in [0, blocks) numbers the thread's block of lines. Returns blocks.
// An exception thrown by a call stops its block and is rethrown (the first block's first) once
// every thread is done.
template <typename Body>
int for_each_line_in_blocks(const Box& box, Body&& body) {
    const std::int64_t ny = box.points(1);
    const std::int64_t lines = ny * box.points(2);
    const int blocks = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(omp_get_max_threads(), lines)));
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(blocks));
#pragma omp parallel num_threads(blocks)
    {
        // The team may be smaller than asked: a thread then takes every blocks / team-th block.
        for (int block = omp_get_thread_num(); block < blocks; block += omp_get_num_threads()) {
            const std::int64_t begin = lines * block / blocks;
            const std::int64_t end = lines * (block + 1) / blocks;
            try {
                for (std::int64_t line = begin; line < end; ++line) {
                    body(box.lower[1] + line % ny, box.lower[2] + line / ny, block);
                }
            } catch (...) {
                errors[static_cast<std::size_t>(block)] = std::current_exception();
            }
        }
    }
    for (const auto& error : errors) {
        if (error) std::rethrow_exception(error);
    }
    return blocks;
}

// Calls body(i, j, k, block) at every node of `box` (i, j, k the grid's indices), i ascending
// within a line, the lines as for_each_line_in_blocks takes them. Returns the blocks.
template <typename Body>
int for_each_node_in_blocks(const Box& box, Body&& body) {
    return for_each_line_in_blocks(box, [&](std::int64_t j, std::int64_t k, int block) {
        for (std::int64_t i = box.lower[0]; i < box.upper[0]; ++i) body(i, j, k, block);
    });
}

template <typename Body>
int for_each_node_in_blocks(const Grid& grid, Body&& body) {
    return for_each_node_in_blocks(grid.box(), std::forward<Body>(body));
}

// Calls body(i, j, k) at every node of `box` (or of the grid), in parallel as above.
template <typename Body>
void for_each_node(const Box& box, Body&& body) {
    for_each_node_in_blocks(
        box, [&](std::int64_t i, std::int64_t j, std::int64_t k, int) { body(i, j, k); });
}
template <typename Body>
void for_each_node(const Grid& grid, Body&& body) {
    for_each_node(grid.box(), std::forward<Body>(body));
}

}  // namespace simrun::framework
