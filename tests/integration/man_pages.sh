#!/usr/bin/env bash
# Lints the man pages in doc/man and checks that they keep up with the code:
#   - every page formats without a single groff warning;
#   - every option the plugin registers (kOptions in common/ddp/plan/request.hpp, the
#     table spank/options.cpp registers) is in spank-ddp.8 with its argument
#     form and usage text, and every SDDP_* equivalent, worker variable and batch
#     variable is named there;
#   - every ddp.conf key (kKnownKeys in common/ddp/site/site_config.cpp) is in ddp.conf.5;
#   - every ddp-agent option (agent/main.cpp) and its environment variable is in
#     ddp-agent.1;
#   - with the ddp-train binary given, every option `ddp-train --help` prints is
#     in ddp-train.1.
# Needs no cluster.  Usage: man_pages.sh SOURCE_DIR [DDP_TRAIN_BINARY]
set -euo pipefail

src=${1:?usage: man_pages.sh SOURCE_DIR [DDP_TRAIN_BINARY]}
train=${2:-}
man_dir=$src/doc/man
problems=0

fail() { echo "FAIL: $*" >&2; exit 1; }
problem() { echo "FAIL: $*" >&2; problems=$((problems + 1)); }

[[ -d $man_dir ]] || fail "no $man_dir"
for page in spank-ddp.8 ddp-check-config.8 ddp.conf.5 ddp-agent.1 ddp-train.1 ddp-tokenize.1; do
  [[ -f $man_dir/$page ]] || fail "missing page $man_dir/$page"
done

# --- 1. Formatting: no warnings at all. ------------------------------------
if command -v groff >/dev/null; then
  lint() { groff -man -Tutf8 -ww -z "$1" 2>&1; }
  # Plain text, no hyphenation, one line per paragraph: easy to grep.
  render() { groff -man -Tascii -P-cbou -rHY=0 -rLL=2000n "$1" 2>/dev/null; }
elif command -v mandoc >/dev/null; then
  lint() { mandoc -man -Tlint -W warning "$1" 2>&1 || true; }
  render() { mandoc -man -Tascii -O width=2000 "$1" | col -b; }
elif command -v man >/dev/null; then
  lint() { { man --warnings -E UTF-8 -l "$1" >/dev/null; } 2>&1; }
  render() { MANWIDTH=2000 man -E ascii -l "$1" 2>/dev/null | col -b; }
else
  fail "none of groff, mandoc, man is installed"
fi

pages=()
for page in "$man_dir"/*.[1-8]; do
  # A .so stub (an alias page) only has to point at a page that exists here.
  if target=$(sed -n '1s/^\.so[[:space:]]\{1,\}//p' "$page") && [[ -n $target ]]; then
    [[ -f $man_dir/$(basename "$target") ]] || problem "$(basename "$page"): .so $target: no such page in doc/man"
    continue
  fi
  pages+=("$page")
  warnings=$(lint "$page")
  if [[ -n $warnings ]]; then
    problem "$(basename "$page") formats with warnings:"
    echo "$warnings" >&2
  fi
  grep -q '^\.TH ' "$page" || problem "$(basename "$page") has no .TH line"
  # The NAME line must parse for whatis/apropos (lintian: bad-whatis-entry).
  if command -v lexgrog >/dev/null && ! lexgrog "$page" >/dev/null 2>&1; then
    problem "$(basename "$page"): lexgrog cannot parse its NAME section"
  fi
  grep -q '^\.SH NAME' "$page" || problem "$(basename "$page") has no NAME section"
done

# The rendered text of a page, whitespace squeezed to single blanks on one line.
flat() { render "$man_dir/$1" | tr '\n\t' '  ' | tr -s ' '; }
# has TEXT PAGE_TEXT: is TEXT in the page as a whole word (an option name is
# not found inside a longer one: --ddp does not count for --ddp-gpus)?
has_word() { grep -Eq -- "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)" <<<"$2"; }
has_text() { grep -Fq -- "$1" <<<"$2"; }

# --- 2. spank-ddp.8 against the plugin's option table. ---------------------
options_cpp=$src/spank/options.cpp
request_hpp=$src/common/ddp/plan/request.hpp
grep -q 'std::size(kOptions)' "$options_cpp" ||
  fail "spank/options.cpp no longer registers kOptions; update man_pages.sh to read the options from where they are now"
# The kOptions table on one line, adjacent string literals joined, one entry per line.
table=$(sed -n '/kOptions\[\] = {/,/^};/p' "$request_hpp" | tr '\n' ' ' | sed -E 's/"[[:space:]]+"//g; s/\}, *\{/}\n{/g')
entries=$(sed -nE 's/.*\{"([a-z0-9-]+)", (nullptr|"([A-Z]+)"), (true|false), *"(\[ddp\] )?([^"]*)".*/\1|\3|\4|\6/p' <<<"$table")
[[ $(wc -l <<<"$entries") -ge 5 ]] || fail "could not read the option table kOptions from $request_hpp"
spank_text=$(flat spank-ddp.8)
spank_options=0
while IFS='|' read -r name arg optional usage; do
  spank_options=$((spank_options + 1))
  if [[ -z $arg ]]; then
    form="--$name"
    has_word "$form" "$spank_text" || problem "spank-ddp.8 does not name $form"
  else
    if [[ $optional == true ]]; then form="--${name}[=$arg]"; else form="--$name=$arg"; fi
    has_text "$form" "$spank_text" || problem "spank-ddp.8 does not show $form"
  fi
  usage=$(tr -s ' ' <<<"$usage")
  has_text "$usage" "$spank_text" || problem "spank-ddp.8 lacks the usage text of --$name: \"$usage\""
done <<<"$entries"

# SDDP_* equivalents, the worker contract and the batch script's variables.
variables=$(
  sed -n '/kEnvEquivalents\[\] = {/,/^};/p' "$request_hpp" | grep -oE '\{"[A-Z_]+"' | tr -d '{"'
  grep -oE 'set(_default)?\("[A-Z_]+"' "$src/common/ddp/plan/worker_env.cpp" | sed -E 's/.*\("//; s/"$//'
  grep -oE 'env\.set\("[A-Z_]+"' "$src/agent/agent.cpp" | sed -E 's/.*\("//; s/"$//'
  sed -n '/^Status export_batch_env/,/^}/p' "$src/spank/launch.cpp" | grep -oE '"(MASTER|DDP)_[A-Z_]+"' | tr -d '"'
)
for var in $(sort -u <<<"$variables"); do
  has_word "$var" "$spank_text" || problem "spank-ddp.8 does not mention $var"
done

# --- 3. ddp.conf.5 against the site config parser. -------------------------
keys=$(tr '\n' ' ' <"$src/common/ddp/site/site_config.cpp" |
  sed -nE 's/.*kKnownKeys =[[:space:]]*(("[^"]*"[[:space:]]*)+);.*/\1/p' | sed -E 's/"[[:space:]]*"//g; s/"//g' | tr ',' '\n' | tr -d ' ')
[[ $(wc -l <<<"$keys") -ge 10 ]] || fail "could not read kKnownKeys from common/ddp/site/site_config.cpp"
conf_text=$(flat ddp.conf.5)
for key in $keys; do
  has_text "$key=" "$conf_text" || problem "ddp.conf.5 does not document $key="
done

# --- 4. ddp-agent.1 against the agent's command line. ----------------------
agent_text=$(flat ddp-agent.1)
agent_options=$(grep -oE '(add_option|add_flag|set_version_flag)\("(-[A-Za-z],)?--[a-z0-9-]+"' "$src/agent/main.cpp" |
  sed -E 's/.*--/--/; s/"$//')
[[ -n $agent_options ]] || fail "could not read the options of agent/main.cpp"
for option in $agent_options --help; do
  has_word "$option" "$agent_text" || problem "ddp-agent.1 does not document $option"
done
for var in $(grep -oE 'envname\("[A-Z_]+"' "$src/agent/main.cpp" | sed -E 's/.*\("//; s/"$//'); do
  has_word "$var" "$agent_text" || problem "ddp-agent.1 does not mention $var"
done

# --- 5. ddp-train.1 against `ddp-train --help`. ----------------------------
train_checked="ddp-train not checked (no binary given)"
if [[ -n $train ]]; then
  help=$("$train" --help) || fail "$train --help failed"
  # Older CLI11 prints "  -h,--help", 2.4+ aligns the long names: "  -h,     --help".
  train_options=$(sed -nE 's/^ {1,12}(-[A-Za-z], *)?(--[A-Za-z0-9][A-Za-z0-9-]*).*/\2/p' <<<"$help")
  [[ $(wc -l <<<"$train_options") -ge 10 ]] || fail "could not read the options of $train --help"
  train_text=$(flat ddp-train.1)
  for option in $train_options; do
    has_word "$option" "$train_text" || problem "ddp-train.1 does not document $option (ddp-train --help prints it)"
  done
  train_checked="$(wc -l <<<"$train_options") ddp-train options"
fi

((problems == 0)) || fail "$problems problem(s) in the man pages"
echo "PASS: ${#pages[@]} man pages format without warnings; documented: $spank_options plugin options," \
  "$(sort -u <<<"$variables" | wc -l) environment variables, $(wc -w <<<"$keys") ddp.conf keys," \
  "$(wc -w <<<"$agent_options") ddp-agent options, $train_checked"
