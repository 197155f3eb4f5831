// The translation unit whose compilation builds the precompiled MLIR headers
// (cmake/OverlapPrecompiledHeaders.cmake); it defines nothing.
