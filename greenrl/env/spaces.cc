#include "greenrl/env/spaces.h"

#include "greenrl/core/errors.h"

namespace greenrl::env {

int64_t Box::dim() const {
  int64_t d = 1;
  for (int64_t s : shape) d *= s;
  return d;
}

int64_t EnvSpec::act_dim() const {
  if (const Box* box = std::get_if<Box>(&action_space)) return box->dim();
  return 1;
}

int64_t EnvSpec::num_actions() const {
  const Discrete* discrete = std::get_if<Discrete>(&action_space);
  GREENRL_CHECK(discrete != nullptr, id + " has a Box action space, not a Discrete one");
  return discrete->n;
}

}  // namespace greenrl::env
