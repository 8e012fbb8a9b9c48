// presets.h: where the CLI finds greenrl's YAML presets (configs/) when the user does not say:
// the checkout's, an installed copy beside the program (`cmake --install`:
// <prefix>/share/greenrl/configs), or the source tree's this binary was built from. Torch-free.
#pragma once

#include <string>

namespace greenrl::cli {

// The presets folder `greenrl bench` uses when --configs is not given: ./configs where it
// exists (a checkout); else, for an installed binary, <prefix>/share/greenrl/configs beside it;
// else the configs folder of the source tree this binary was built from, so `greenrl bench`
// works from any directory once build/bin is on PATH.
std::string DefaultConfigDir();

// For a --config path that does not exist and is written as the README writes presets
// ("configs/ppo/cartpole.yaml", relative), the same preset where it does exist: in
// <prefix>/share/greenrl/configs beside an installed program, else in the source tree's
// configs; "" when the path exists, is not of that form, or neither copy exists.
std::string PresetElsewhere(const std::string& config_path);

// greenrl's tuned preset for `algo` on `env_id`: the first, by name, of the YAML files in
// DefaultConfigDir()/<algo>/ whose env_id is `env_id` (configs/ppo/cartpole.yaml for ppo on
// CartPole-v1); "" when there is none. Files that do not read as YAML are passed over.
// Errors: none.
std::string TunedPreset(const std::string& algo, const std::string& env_id);

// An env id's name without its version: "Hopper" for "Hopper-v5" (Gymnasium's
// <name>-v<version>); the whole id when it does not end in "-v" and digits.
// Errors: none.
std::string WithoutVersion(const std::string& env_id);

// greenrl's tuned preset for `algo` on another version of env_id's task, where there is none for
// env_id itself: the first, by name, whose env_id has the same name before "-v<digits>"
// (configs/ppo/hopper.yaml, rl-zoo's values for Hopper-v4, when env_id is Hopper-v5: greenrl's
// MuJoCo presets name v4 ids, as the rl-zoo sections they copy do); *tuned_for (when not null) gets
// that preset's env_id. "" when TunedPreset(algo, env_id) finds one, env_id has no version, or no
// other version has one. Errors: none.
std::string TunedPresetForAnotherVersion(const std::string& algo, const std::string& env_id,
                                         std::string* tuned_for);

// A preset's training length: its top-level n_timesteps as a whole number of env steps
// ("1000000" for `n_timesteps: !!float 1e6`); "" when the file does not read as YAML or has no
// numeric n_timesteps. For messages that name a preset. Errors: none.
std::string PresetTimesteps(const std::string& path);

// A preset's note for users choosing it: the text after "# Note: " on the first line of its
// leading comment block that starts so (configs/ppo/hopper.yaml says that the preset tends to
// settle on standing); "" when the file cannot be read or has no such line. The messages that
// suggest a preset repeat it. Errors: none.
std::string PresetNote(const std::string& path);

// The algorithm a --config file trains, as far as the file says: a greenrl preset's top-level
// `algo`, else an rl-zoo file's name (train::AlgoOfFileName: ppo.yml, dqn.yml, sac.yml); "" when
// neither (an unreadable file, another name). For messages given before the config is loaded.
// Errors: none.
std::string AlgoOfConfigFile(const std::string& config_path);

}  // namespace greenrl::cli
