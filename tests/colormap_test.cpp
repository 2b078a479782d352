// Colour maps reproduce matplotlib's tables and look-up rule (issue 3, --cmap).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "render/colormap.hpp"

using attnviz::colormap_by_name;
using attnviz::Rgb;

TEST_CASE("colormap: endpoints match matplotlib", "[render]") {
  const auto& viridis = colormap_by_name("viridis");
  CHECK(viridis.at(0.0) == Rgb{68, 1, 84});
  CHECK(viridis.at(1.0) == Rgb{253, 231, 37});
  CHECK(colormap_by_name("greys").at(0.0) == Rgb{255, 255, 255});
  CHECK(colormap_by_name("greys").at(1.0) == Rgb{0, 0, 0});
  CHECK(colormap_by_name("magma").at(0.0) == Rgb{0, 0, 4});
  CHECK(colormap_by_name("blues").at(0.0) == Rgb{247, 251, 255});
}

TEST_CASE("colormap: rdbu is RdBu_r, negative blue and positive red", "[render]") {
  const auto& rdbu = colormap_by_name("rdbu");
  CHECK(rdbu.matplotlib_name() == "RdBu_r");
  CHECK(rdbu.at(0.0) == Rgb{5, 48, 97});
  CHECK(rdbu.at(1.0) == Rgb{103, 0, 31});
  const Rgb mid = rdbu.at(0.5);
  CHECK(mid.r > 240);
  CHECK(mid.g > 240);
  CHECK(mid.b > 240);
}

TEST_CASE("colormap: index is min(floor(t * 256), 255) with t clamped", "[render]") {
  const auto& viridis = colormap_by_name("viridis");
  // Entry 1 of matplotlib's viridis is (68, 2, 86): t in [1/256, 2/256) selects it.
  CHECK(viridis.at(1.0 / 256.0) == Rgb{68, 2, 86});
  CHECK(viridis.at(1.999 / 256.0) == Rgb{68, 2, 86});
  CHECK(viridis.at(0.999 / 256.0) == Rgb{68, 1, 84});
  CHECK(viridis.at(255.5 / 256.0) == viridis.at(1.0));
  CHECK(viridis.at(-3.0) == viridis.at(0.0));
  CHECK(viridis.at(7.0) == viridis.at(1.0));
}

TEST_CASE("colormap: names are listed and unknown names are rejected with the list", "[render][errors]") {
  const std::vector<std::string> expected = {"viridis", "magma", "inferno", "plasma",
                                             "cividis", "greys", "blues",   "rdbu"};
  CHECK(attnviz::colormap_names() == expected);
  for (const std::string& name : expected) CHECK(colormap_by_name(name).name() == name);
  CHECK_THROWS_AS(colormap_by_name("jet"), attnviz::UsageError);
  CHECK_THROWS_WITH(colormap_by_name("Viridis"),
                    Catch::Contains("--cmap") && Catch::Contains("\"Viridis\"") &&
                        Catch::Contains("viridis, magma, inferno"));
}
