--[[
cli_filter.lua for slurm-ddp (optional): make --ddp-gpus=N also ask Slurm for
the GPUs.

spank_ddp.so is a SPANK plugin, and SPANK cannot change what a job requests:
`sbatch -N2 --ddp-gpus=4 job.sh` alone allocates no GPUs, and every --ddp step
then fails on the nodes ("GPU mode, but the step has no GPUs"). Users can always
write `--gpus-per-node=4 --ddp` themselves; with this script installed they do
not have to. When a job is submitted with --ddp-gpus=N (command line, #SBATCH
line, or --ddp with SDDP_GPUS=N in the submitting environment; the option
wins), it adds

    --gpus-per-node=N     unless the job already asks for GPUs itself
                          (--gpus-per-node, --gres=gpu..., --gpus, --gpus-per-task,
                          --gpus-per-socket, or their SBATCH_/SLURM_/SALLOC_
                          variables): those are left alone;
    --ntasks-per-node=1   unless the job already says how many tasks it wants
                          (--ntasks/-n, --ntasks-per-node, --ntasks-per-gpu):
                          one task per node is the shape in which the plugin
                          starts ddp-agent, which starts the node's N workers.

A job that asks for fewer GPUs per node than --ddp-gpus (--gpus-per-node=2 or
--gres=gpu:2 with --ddp-gpus=4) is refused before anything is submitted, with a
message starting "ddp:" that names both values and the fix. Nothing else is
touched: no --ddp-gpus (and no --ddp with SDDP_GPUS), --no-ddp or SDDP_MODE=off
under a bare --ddp, a job without --ddp whatever its environment, or srun
starting a step inside an existing allocation (SLURM_JOB_ID set, or --jobid):
the job's shape was settled when it was submitted, and steps inherit it.

It runs in the client (srun, salloc, sbatch) of whoever submits, so it is a
convenience, not a policy: a user with a slurm.conf of their own bypasses it.

INSTALL (optional; the plugin works without it)

  1. Copy this file next to slurm.conf under the name cli_filter.lua (the
     slurm-ddp package installs it as /usr/share/slurm-ddp/cli_filter.lua,
     `make install` in ${datadir}/slurm-ddp/), e.g.
         install -m 644 /usr/local/share/slurm-ddp/cli_filter.lua /etc/slurm/cli_filter.lua
     on every machine that has a slurm.conf users submit with: login nodes,
     and compute nodes too (jobs that submit jobs). With configless Slurm, the
     slurmctld host alone: slurmctld hands cli_filter.lua to slurmd and to the
     clients along with slurm.conf.
  2. In slurm.conf add
         CliFilterPlugins=cli_filter/lua
     (a comma list if the site already uses others, e.g.
     CliFilterPlugins=cli_filter/syslog,cli_filter/lua). srun, salloc and
     sbatch read slurm.conf and the script at every start, so no daemon needs
     a restart; with configless Slurm, `scontrol reconfigure` makes slurmctld
     hand out the new files.
  3. Try it: `sbatch -N2 --ddp-gpus=2 --wrap 'scontrol show job $SLURM_JOB_ID'`
     shows TresPerNode=gres:gpu:2 and NumTasks=2; `sbatch -v ...` prints
     "lua: ddp: --ddp-gpus=2: added --gpus-per-node=2 --ntasks-per-node=1"
     (srun -v does not show it in 22.05).

SITES THAT ALREADY HAVE A cli_filter.lua

Slurm loads exactly one cli_filter.lua and calls its three global functions
slurm_cli_setup_defaults, slurm_cli_pre_submit and slurm_cli_post_submit.
Keep yours, and either

  (a) load this file at the top of yours, before your own functions (yours
      then replace the three no-ops below, and ddp_cli_pre_submit stays):

          dofile("/usr/local/share/slurm-ddp/cli_filter.lua")

  or (b) paste everything between the "BEGIN slurm-ddp" and "END slurm-ddp"
      lines into your script,

and call it first thing in your slurm_cli_pre_submit:

      function slurm_cli_pre_submit(options, pack_offset)
          local rc = ddp_cli_pre_submit(options, pack_offset)
          if rc ~= slurm.SUCCESS then return rc end
          -- ... your own checks, which now see the GPUs and tasks it added
          return slurm.SUCCESS
      end

NOTES (Slurm 22.05, cli_filter/lua)

  - `options` is a proxy: options[name] reads and `options[name] = "value"`
    sets a srun/sbatch option by its long name, but pairs(options) shows
    nothing, and an option never given reads as its default ("-2", i.e.
    NO_VAL, for --ntasks-per-node; "1" for --ntasks) or nil. Which options
    were given comes from slurm.json_cli_options(options), a JSON object of
    the options set by the command line, #SBATCH lines or input variables.
  - SPANK options are in options["spank"][plugin][option]: here
    options["spank"]["ddp"]["ddp-gpus"] = "2"; an option not given is nil
    (a flag reads "unset"); in the JSON they appear as "spank:ddp-gpus".
  - slurm_cli_setup_defaults is called with `options` only: the `early`
    argument of the documentation is always nil in 22.05.
  - Tested with select/cons_tres. Under select/cons_res, which has no --gpus*
    options, set ddp_gpus_option below to "gres" (then --gres=gpu:N is added).
--]]

-- BEGIN slurm-ddp ------------------------------------------------------------

-- How N GPUs per node are requested: "gpus-per-node" (select/cons_tres) or
-- "gres" (as --gres=gpu:N; also select/cons_res).
local ddp_gpus_option = "gpus-per-node"

-- The value of one of the plugin's SPANK options, or nil when not given. The
-- plugin registers under the name "ddp"; any plugin offering the option will do.
local function ddp_spank_option(options, name)
    local ok, spank = pcall(function() return options["spank"] end)
    if not ok or type(spank) ~= "table" then return nil end
    local value = spank["ddp"] and spank["ddp"][name]
    if value == nil then
        for _, opts in pairs(spank) do
            if type(opts) == "table" and opts[name] ~= nil then
                value = opts[name]
                break
            end
        end
    end
    if value == "unset" then return nil end
    return value
end

-- The names of the options the user set (command line, #SBATCH, input
-- environment variables), or nil when Slurm cannot tell.
local function ddp_set_options(options)
    local ok, json = pcall(slurm.json_cli_options, options)
    if not ok or type(json) ~= "string" then return nil end
    local set = {}
    -- Compact JSON: {"key":"value",...,"argv":[...]}. A quote inside a value
    -- is escaped, so `,"word":` only ever starts a key.
    for key in json:gmatch('[{,]"([^"\\]+)":') do set[key] = true end
    return set
end

local function ddp_is_set(options, set, name, unset_value)
    if set then return set[name] == true end
    local value = options[name]  -- fallback: compare with the default
    return value ~= nil and value ~= unset_value
end

-- GPUs per node in a "[type:]count[,...]" list (--gpus-per-node), or nil.
local function ddp_count_gpus_per_node(value)
    local total = 0
    for item in string.gmatch(value, "[^,]+") do
        local count = tonumber(string.match(item, "(%d+)$"))
        if count == nil then return nil end
        total = total + count
    end
    return total
end

-- GPUs per node in a --gres value as Slurm stores it ("gres:gpu:2",
-- "gres:gpu:a100:2,gres:nic:1", "gres:gpu"): (false) when it names no GPU,
-- (true, count) when it does, (true, nil) when the count cannot be read.
local function ddp_count_gres_gpus(value)
    local any, total = false, 0
    for item in string.gmatch(value, "[^,]+") do
        item = string.gsub(item, "^gres[:/]", "")
        local fields = {}
        for field in string.gmatch(item, "[^:]+") do table.insert(fields, field) end
        if fields[1] == "gpu" then
            any = true
            local count = tonumber(fields[#fields])
            if #fields == 1 or (#fields == 2 and count == nil) then
                count = 1  -- gpu or gpu:TYPE: one GPU
            end
            if count == nil or total == nil then
                total = nil
            else
                total = total + count
            end
        end
    end
    if not any then return false, nil end
    return true, total
end

-- The fix to suggest: VALUE with its count replaced by N when it is a single
-- "[type:]count" (keeps a GPU type), else PREFIX..N.
local function ddp_with_count(value, n, prefix)
    prefix = prefix or ""
    if not string.find(value, ",", 1, true) then
        local head = string.match(value, "^(.*:)%d+$")
        if head then return head .. tostring(n) end
        if string.match(value, "^%d+$") then return tostring(n) end
    end
    return prefix .. tostring(n)
end

function ddp_cli_pre_submit(options, pack_offset)
    -- Steps inside an allocation cannot change it; they inherit its GPUs.
    if options["type"] == "srun" then
        local jobid = options["jobid"]
        if os.getenv("SLURM_JOB_ID") ~= nil or (jobid ~= nil and jobid ~= "unset") then
            return slurm.SUCCESS
        end
    end

    -- The plugin's rules: SDDP_* variables count only under --ddp, and fill
    -- in what no option said; SDDP_MODE=off opts out where --ddp names no mode.
    local ddp = ddp_spank_option(options, "ddp")
    local source = "--ddp-gpus"
    local value = ddp_spank_option(options, "ddp-gpus")
    if value == nil then
        if ddp == nil then return slurm.SUCCESS end
        value = os.getenv("SDDP_GPUS")
        source = "SDDP_GPUS"
        if value == nil or value == "" then return slurm.SUCCESS end
    end
    if ddp_spank_option(options, "no-ddp") ~= nil then return slurm.SUCCESS end
    -- A bare --ddp reads "set" (Slurm 22.05), --ddp=MODE the mode.
    local names_mode = ddp ~= nil and ddp ~= "set" and ddp ~= "" and ddp ~= "(null)"
    if os.getenv("SDDP_MODE") == "off" and not names_mode then
        return slurm.SUCCESS
    end
    local n = tonumber(value)
    if n == nil or n < 1 or n ~= math.floor(n) then
        return slurm.SUCCESS  -- the plugin itself reports a bad value
    end
    local given = source .. "=" .. value

    local set = ddp_set_options(options)

    -- GPUs: leave an explicit request alone, but refuse one too small.
    local gpus_per_node = ddp_is_set(options, set, "gpus-per-node", nil) and options["gpus-per-node"]
    local gres = ddp_is_set(options, set, "gres", nil) and options["gres"]
    local gres_has_gpus, gres_gpus = false, nil
    if gres then gres_has_gpus, gres_gpus = ddp_count_gres_gpus(gres) end
    local has_gpus = (gpus_per_node and true) or gres_has_gpus
    for _, name in ipairs({"gpus", "gpus-per-task", "gpus-per-socket"}) do
        if ddp_is_set(options, set, name, nil) and options[name] ~= nil then has_gpus = true end
    end

    if gpus_per_node then
        local have = ddp_count_gpus_per_node(gpus_per_node)
        if have ~= nil and have < n then
            slurm.log_error("ddp: %s asks for %d GPU workers per node but --gpus-per-node=%s gives each node only %d GPU(s); " ..
                            "use --gpus-per-node=%s (or drop --gpus-per-node: %s requests the GPUs itself), " ..
                            "or %s=%d",
                            given, n, gpus_per_node, have, ddp_with_count(gpus_per_node, n), source, source, have)
            return slurm.ERROR
        end
    end
    if gres_gpus ~= nil and gres_gpus < n then
        -- Slurm 22.05 stores "gres:gpu:2", 24.11 "gres/gpu:2"; the user wrote "gpu:2".
        local shown = string.gsub(gres, "gres[:/]", "")
        slurm.log_error("ddp: %s asks for %d GPU workers per node but --gres=%s gives each node only %d GPU(s); " ..
                        "use --gres=%s (or drop the GPUs from --gres: %s requests them itself), " ..
                        "or %s=%d",
                        given, n, shown, gres_gpus, ddp_with_count(shown, n, "gpu:"), source, source, gres_gpus)
        return slurm.ERROR
    end

    local added = {}
    if not has_gpus then
        if ddp_gpus_option == "gres" then
            -- keep other GRES the job asked for (--gres=nic:1)
            local value = "gpu:" .. tostring(n)
            if gres then value = string.gsub(gres, "gres:", "") .. "," .. value end
            options["gres"] = value
            table.insert(added, "--gres=" .. value)
        else
            options["gpus-per-node"] = tostring(n)
            table.insert(added, "--gpus-per-node=" .. tostring(n))
        end
    end

    -- Tasks: one per node (ddp-agent starts the workers) unless the user chose.
    local has_tasks = ddp_is_set(options, set, "ntasks", "1") or
                      ddp_is_set(options, set, "ntasks-per-node", "-2") or
                      ddp_is_set(options, set, "ntasks-per-gpu", "-2")
    if not has_tasks then
        options["ntasks-per-node"] = "1"
        table.insert(added, "--ntasks-per-node=1")
    end

    if #added > 0 then
        slurm.log_verbose("ddp: %s: added %s", given, table.concat(added, " "))
    end
    return slurm.SUCCESS
end

-- END slurm-ddp --------------------------------------------------------------

function slurm_cli_setup_defaults(options, early)
    return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, pack_offset)
    return ddp_cli_pre_submit(options, pack_offset)
end

function slurm_cli_post_submit(offset, jobid, stepid)
    return slurm.SUCCESS
end
