#shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
#fail, plan_has, refused_edit and the fixtures are its) : the families added after Aquila
#(shard_cli_families3.bash had grown near 800 lines).Each family's block: its plan lines at
#one rank and scheme, and the config.json edits it refuses, naming the key.
