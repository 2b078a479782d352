// Scalar, matrix and mask types shared by every module; nothing else.
// attnviz computes in float32, like PyTorch and TF by default: the real-model references
// agree to ~1e-6, and float32 GEMM is what makes large inputs fast.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

/// The one scalar type of all attention maths (float32, as the frameworks compute).
using Scalar = float;

/// Row-major dense matrix: row i is token i (or query i), matching JSON's list-of-rows layout.
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Column vector of Scalars (biases, per-row statistics).
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

/// Which (query, key) pairs may attend: 1 = allowed, 0 = masked (causal or padding).
/// Shape n_q × n_k; an empty (0 × 0) matrix means "everything allowed".
using MaskMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Token labels as given in the input, UTF-8, kept byte for byte.
using Tokens = std::vector<std::string>;

/// Read-only values shared by the pictures that show them: a render request, and every job
/// that copies it, holds these pointers, never a copy of the values (8 heads of 18 651 tokens
/// are 11 GB of weights; copies per picture tripled the peak memory, issue 7).
using SharedMatrix = std::shared_ptr<const Matrix>;
using SharedMask = std::shared_ptr<const MaskMatrix>;

/// `value` moved into shared ownership.
template <typename T>
std::shared_ptr<const T> share(T value) {
  return std::make_shared<const T>(std::move(value));
}

/// A pointer to `value` that owns nothing (shared_ptr's aliasing constructor with no owner):
/// the caller keeps `value` alive for as long as the pointer or any copy of it is used.
template <typename T>
std::shared_ptr<const T> borrow(const T& value) {
  return std::shared_ptr<const T>(std::shared_ptr<const T>(), &value);
}

}  // namespace attnviz
