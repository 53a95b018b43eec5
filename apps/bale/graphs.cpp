#include "graphs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <stdexcept>

namespace bale {

namespace {

// A generator for row (or point) `index` of the graph drawn from `seed`.
std::mt19937_64 generator_for(std::uint64_t seed, std::int64_t index) {
  return std::mt19937_64{seed * 0x9E3779B97F4A7C15ull ^
                         (static_cast<std::uint64_t>(index) + 1) * 0xD1B54A32D192ED03ull};
}

std::int64_t checked_product(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw std::invalid_argument("the Kronecker graph is too large to count in 64 bits");
  return product;
}

// Erdős–Rényi: each pair (v, w < v) is an edge with probability p, decided by row v alone.
// Geometric gaps between the columns taken make a row cost its degree, not v.
void flat_row(const graph_spec& spec, std::int64_t v, std::vector<std::int64_t>& row) {
  const double p =
      std::min(1.0, static_cast<double>(spec.degree) / static_cast<double>(spec.vertices - 1));
  if (p <= 0) return;
  auto random = generator_for(spec.seed, v);
  std::uniform_real_distribution<double> uniform{0.0, 1.0};
  const double log_miss = std::log1p(-p);
  for (std::int64_t w = -1;;) {
    const double u = 1.0 - uniform(random);  // in (0, 1]
    const double gap = p >= 1.0 ? 0.0 : std::floor(std::log(u) / log_miss);
    if (gap >= static_cast<double>(v - w - 1)) break;
    w += 1 + static_cast<std::int64_t>(gap);
    row.push_back(w);
  }
}

// Random geometric: points uniform in the unit square, joined when closer than `radius`.
// Every PE draws every point (16 bytes each), then looks only at its rows' neighbour cells.
class geometric_points {
 public:
  explicit geometric_points(const graph_spec& spec)
      : radius_(std::sqrt(static_cast<double>(spec.degree) /
                          (std::numbers::pi * static_cast<double>(spec.vertices - 1)))),
        side_(std::max<std::int64_t>(1, static_cast<std::int64_t>(1.0 / radius_))),
        x_(static_cast<std::size_t>(spec.vertices)),
        y_(x_.size()),
        cell_start_(static_cast<std::size_t>(side_ * side_ + 1), 0) {
    std::uniform_real_distribution<double> uniform{0.0, 1.0};
    for (std::int64_t v = 0; v < spec.vertices; ++v) {
      auto random = generator_for(spec.seed, v);
      x_[static_cast<std::size_t>(v)] = uniform(random);
      y_[static_cast<std::size_t>(v)] = uniform(random);
    }
    // A counting sort of the points by cell.
    for (std::int64_t v = 0; v < spec.vertices; ++v) ++cell_start_[cell_of(v) + 1];
    for (std::size_t c = 1; c < cell_start_.size(); ++c) cell_start_[c] += cell_start_[c - 1];
    in_cell_.resize(x_.size());
    std::vector<std::int64_t> next(cell_start_.begin(), cell_start_.end() - 1);
    for (std::int64_t v = 0; v < spec.vertices; ++v)
      in_cell_[static_cast<std::size_t>(next[cell_of(v)]++)] = v;
  }

  void row(std::int64_t v, std::vector<std::int64_t>& into) const {
    const auto [cx, cy] = cell_xy(v);
    for (std::int64_t nx = std::max<std::int64_t>(cx - 1, 0); nx <= std::min(cx + 1, side_ - 1);
         ++nx)
      for (std::int64_t ny = std::max<std::int64_t>(cy - 1, 0); ny <= std::min(cy + 1, side_ - 1);
           ++ny) {
        const auto cell = static_cast<std::size_t>(nx * side_ + ny);
        for (std::int64_t k = cell_start_[cell]; k < cell_start_[cell + 1]; ++k) {
          const std::int64_t w = in_cell_[static_cast<std::size_t>(k)];
          const double dx = x_[static_cast<std::size_t>(v)] - x_[static_cast<std::size_t>(w)];
          const double dy = y_[static_cast<std::size_t>(v)] - y_[static_cast<std::size_t>(w)];
          if (w < v && dx * dx + dy * dy < radius_ * radius_) into.push_back(w);
        }
      }
  }

 private:
  std::pair<std::int64_t, std::int64_t> cell_xy(std::int64_t v) const {
    auto coordinate = [&](double at) {
      return std::min(side_ - 1, static_cast<std::int64_t>(at * static_cast<double>(side_)));
    };
    return {coordinate(x_[static_cast<std::size_t>(v)]),
            coordinate(y_[static_cast<std::size_t>(v)])};
  }
  std::size_t cell_of(std::int64_t v) const {
    const auto [cx, cy] = cell_xy(v);
    return static_cast<std::size_t>(cx * side_ + cy);
  }

  double radius_;
  std::int64_t side_;  // cells per side, each at least `radius_` wide
  std::vector<double> x_, y_;
  std::vector<std::int64_t> cell_start_, in_cell_;
};

// Kronecker product of stars with a loop at each centre: vertex v has one digit per factor
// (0 the centre, 1..m a leaf), and v ~ w when every digit pair is an edge of its factor (a
// centre's neighbours are itself and its leaves; a leaf's, the centre).
void kronecker_row(std::span<const std::int64_t> stars, std::int64_t v,
                   std::vector<std::int64_t>& row) {
  std::vector<std::int64_t> digits(stars.size());
  std::int64_t rest = v;
  for (std::size_t i = stars.size(); i-- > 0;) {
    digits[i] = rest % (stars[i] + 1);
    rest /= stars[i] + 1;
  }
  // Walk the neighbours' digits like an odometer; a leaf digit may only pair with the centre.
  std::vector<std::int64_t> choice(stars.size(), 0);
  for (;;) {
    std::int64_t w = 0;
    for (std::size_t i = 0; i < stars.size(); ++i) w = w * (stars[i] + 1) + choice[i];
    if (w < v) row.push_back(w);
    std::size_t i = stars.size();
    while (i-- > 0) {
      if (digits[i] == 0 && choice[i] < stars[i]) {
        ++choice[i];
        break;
      }
      choice[i] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) break;
  }
  std::sort(row.begin(), row.end());
}

}  // namespace

std::string name(graph_model model) {
  switch (model) {
    case graph_model::flat:
      return "flat";
    case graph_model::geometric:
      return "geometric";
    case graph_model::kronecker:
      return "kronecker";
  }
  return "?";
}

graph_model graph_model_named(const std::string& text) {
  for (graph_model each : {graph_model::flat, graph_model::geometric, graph_model::kronecker})
    if (name(each) == text) return each;
  throw std::invalid_argument("unknown graph model '" + text +
                              "'; expected flat, geometric or kronecker");
}

std::vector<std::int64_t> kronecker_stars(std::int64_t vertices, std::int64_t degree) {
  // Each factor K_{1,m} multiplies the mean degree by (2m + 1) / (m + 1), just under 2: try
  // every factor count and keep the one whose mean degree comes closest.
  std::vector<std::int64_t> best;
  double best_miss = std::numeric_limits<double>::infinity();
  for (int factors = 1; factors <= 40; ++factors) {
    const auto m = std::max<std::int64_t>(
        1, std::llround(std::pow(static_cast<double>(vertices), 1.0 / factors)) - 1);
    const double n = std::pow(static_cast<double>(m + 1), factors);
    const double mean = (std::pow(static_cast<double>(2 * m + 1), factors) - 1) / n;
    const double miss = std::abs(mean - static_cast<double>(degree));
    if (miss < best_miss) {
      best_miss = miss;
      best.assign(static_cast<std::size_t>(factors), m);
    }
  }
  return best;
}

std::int64_t vertex_count(const graph_spec& spec) {
  if (spec.model != graph_model::kronecker) return spec.vertices;
  if (spec.stars.empty()) throw std::invalid_argument("a Kronecker graph needs at least one star");
  std::int64_t n = 1;
  for (std::int64_t m : spec.stars) {
    if (m < 1) throw std::invalid_argument("every star of a Kronecker graph needs a leaf");
    n = checked_product(n, m + 1);
  }
  return n;
}

sparse_rows lower_triangle(const graph_spec& spec, int pe, int npes) {
  const std::int64_t n = vertex_count(spec);
  if (spec.model != graph_model::kronecker && (n < 2 || spec.degree < 1))
    throw std::invalid_argument("a random graph needs at least 2 vertices and degree 1");
  std::optional<geometric_points> points;
  if (spec.model == graph_model::geometric) points.emplace(spec);
  sparse_rows lower;
  lower.columns = n;
  std::vector<std::int64_t> row;
  for (std::int64_t v = pe; v < n; v += npes) {
    row.clear();
    switch (spec.model) {
      case graph_model::flat:
        flat_row(spec, v, row);
        break;
      case graph_model::geometric:
        points->row(v, row);
        std::sort(row.begin(), row.end());
        break;
      case graph_model::kronecker:
        kronecker_row(spec.stars, v, row);
        break;
    }
    lower.cols.insert(lower.cols.end(), row.begin(), row.end());
    lower.offsets.push_back(static_cast<std::int64_t>(lower.cols.size()));
  }
  return lower;
}

sparse_rows lower_triangle(const troupe::pgas::world& world, const graph_spec& spec) {
  return lower_triangle(spec, world.pe(), world.npes());
}

std::int64_t kronecker_triangles(std::span<const std::int64_t> stars) {
  std::int64_t walks = 1;     // prod(1 + 3 m_i)
  std::int64_t vertices = 1;  // prod(m_i + 1)
  for (std::int64_t m : stars) {
    walks = checked_product(walks, 1 + 3 * m);
    vertices = checked_product(vertices, m + 1);
  }
  return (walks - 1 - 3 * (vertices - 1)) / 6;
}

sparse_rows adjacency(troupe::pgas::world& world, const sparse_rows& lower) {
  const sparse_rows upper = transpose(world, form::selector, lower);
  // Row v of L holds neighbours below v, of L^T those above: concatenated, they stay sorted.
  sparse_rows whole;
  whole.columns = lower.columns;
  for (std::size_t r = 0; r < lower.rows(); ++r) {
    whole.cols.insert(whole.cols.end(), lower.cols.begin() + lower.offsets[r],
                      lower.cols.begin() + lower.offsets[r + 1]);
    whole.cols.insert(whole.cols.end(), upper.cols.begin() + upper.offsets[r],
                      upper.cols.begin() + upper.offsets[r + 1]);
    whole.offsets.push_back(static_cast<std::int64_t>(whole.cols.size()));
  }
  return whole;
}

}  // namespace bale
