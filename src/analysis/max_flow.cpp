#include "analysis/max_flow.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <queue>

namespace attnviz {

MaxFlow::MaxFlow(int nodes) : out_(static_cast<std::size_t>(nodes)), level_(static_cast<std::size_t>(nodes)), next_(static_cast<std::size_t>(nodes)) {}

void MaxFlow::add_edge(int from, int to, double capacity) {
  assert(capacity >= 0);
  out_[from].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity, 0});
  out_[to].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0, 0});
}

bool MaxFlow::levels_from(int source, int sink) {
  std::fill(level_.begin(), level_.end(), -1);
  level_[source] = 0;
  std::queue<int> queue;
  queue.push(source);
  while (!queue.empty()) {
    const int node = queue.front();
    queue.pop();
    for (const int e : out_[node]) {
      const Edge& edge = edges_[e];
      if (level_[edge.to] < 0 && edge.capacity - edge.flow > kSaturated) {
        level_[edge.to] = level_[node] + 1;
        queue.push(edge.to);
      }
    }
  }
  return level_[sink] >= 0;
}

// One augmenting path of the level graph from `node`, at most `limit`; next_ skips edges
// already found saturated or dead in this phase (what makes a phase O(VE)).
double MaxFlow::push(int node, int sink, double limit) {
  if (node == sink) return limit;
  for (int& i = next_[node]; i < static_cast<int>(out_[node].size()); ++i) {
    const int e = out_[node][i];
    Edge& edge = edges_[e];
    const double room = edge.capacity - edge.flow;
    if (room <= kSaturated || level_[edge.to] != level_[node] + 1) continue;
    const double pushed = push(edge.to, sink, std::min(limit, room));
    if (pushed > 0) {
      edge.flow += pushed;
      edges_[e ^ 1].flow -= pushed;
      return pushed;
    }
  }
  return 0;
}

double MaxFlow::run(int source, int sink) {
  assert(source != sink);
  for (Edge& edge : edges_) edge.flow = 0;
  double total = 0;
  while (levels_from(source, sink)) {
    std::fill(next_.begin(), next_.end(), 0);
    while (const double pushed = push(source, sink, std::numeric_limits<double>::infinity())) total += pushed;
  }
  return total;
}

}  // namespace attnviz
