// Maximum flow by Dinic's algorithm (E. A. Dinic, "Algorithm for solution of a problem of
// maximum flow in networks with power estimation", Soviet Math. Doklady 11, 1970; as in
// Cormen et al., and cp-algorithms.com/graph/dinic.html): BFS levels from the source, then
// blocking flows along strictly increasing levels, O(V²E). Real capacities. Pure maths.
#pragma once

#include <vector>

namespace attnviz {

/// A directed graph with capacities; run() may be called for many (source, sink) pairs, each
/// starting from zero flow.
class MaxFlow {
 public:
  /// A graph of `nodes` nodes numbered from 0, no edges.
  explicit MaxFlow(int nodes);
  /// An edge from → to with capacity ≥ 0 (and its residual reverse edge).
  void add_edge(int from, int to, double capacity);
  /// The value of a maximum flow from `source` to `sink` (0 when source == sink is not asked:
  /// Requires source != sink). Residual capacities below kSaturated count as none.
  double run(int source, int sink);

  /// Residual capacity treated as zero: float32 weights are not exact beyond ~1e-7 anyway.
  static constexpr double kSaturated = 1e-12;

 private:
  struct Edge {
    int to;
    double capacity;  ///< the original capacity (0 for a reverse edge)
    double flow;
  };
  bool levels_from(int source, int sink);
  double push(int node, int sink, double limit);

  std::vector<Edge> edges_;               ///< edge e's reverse is e ^ 1
  std::vector<std::vector<int>> out_;     ///< edges leaving each node
  std::vector<int> level_, next_;
};

}  // namespace attnviz
