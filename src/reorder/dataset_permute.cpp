// One permutation applied to everything a node data set holds.
#include <algorithm>

#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {

NodeDataset apply(const Permutation& p, const NodeDataset& ds) {
  const int64_t n = ds.graph.rows;
  TESSERA_CHECK(p.size() == n, "reorder::apply: permutation of ", p.size(), " nodes for data set '", ds.name,
                "' of ", n, " nodes");
  TESSERA_CHECK(ds.features.rows == n || ds.features.rows == 0, "reorder::apply: data set '", ds.name, "' has ",
                ds.features.rows, " feature rows for ", n, " nodes");
  TESSERA_CHECK(ds.labels.empty() || int64_t(ds.labels.size()) == n, "reorder::apply: data set '", ds.name,
                "' has ", ds.labels.size(), " labels for ", n, " nodes");
  NodeDataset out;
  out.name = ds.name;
  out.num_classes = ds.num_classes;
  out.graph = p.apply(ds.graph.view());
  out.features = Dense<float>(ds.features.rows, ds.features.cols);
  if (ds.features.rows) out.features.data = p.gather(ds.features.data, ds.features.cols);
  if (!ds.labels.empty()) out.labels = p.gather(ds.labels);
  auto map_split = [&](const std::vector<int64_t>& ids, const char* which) {
    std::vector<int64_t> m(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      TESSERA_CHECK(ids[k] >= 0 && ids[k] < n, "reorder::apply: ", which, " split entry ", k, " is node ", ids[k],
                    " outside [0, ", n, ")");
      m[k] = p.new_of_old(ids[k]);
    }
    std::sort(m.begin(), m.end());  // loaders hand out sorted id lists; keep that invariant
    return m;
  };
  out.train = map_split(ds.train, "train");
  out.val = map_split(ds.val, "val");
  out.test = map_split(ds.test, "test");
  return out;
}

}  // namespace tessera::reorder
