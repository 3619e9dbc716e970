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
RTLGEN       := target/release/rtl-gen
KVSIM        := target/release/kvsim
WAIVERS      := constraints/lint_waivers.vlt

# Units emitted by `make` (default parameters) and synthesised by `make synth`.
UNITS        := oaken-quantizer oaken-dequantizer zero-remove-shifter zero-insert-shifter mul-pipe div-round div-const fp16-convert
SYNTH_UNITS  ?= oaken-quantizer oaken-dequantizer zero-remove-shifter zero-insert-shifter div-round div-const
UNIT         ?= oaken-quantizer

APT_PKGS     := verilator yosys opensta iverilog
APT_NORECS   := qflow-tech-osu018

.PHONY: all deps build rtl lint prove test waves synth bench clean

all: deps build rtl lint

# Installs whatever is missing (Debian packages; needs root).
deps:
	@missing=""; \
	for t in verilator yosys sta iverilog; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	[ -f "$(LIBERTY)" ] || missing="$$missing osu018"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root, or install: apt-get install $(APT_PKGS) $(APT_NORECS)" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq; \
	  apt-get install -y -qq $(APT_PKGS) >/dev/null; \
	  apt-get install -y -qq --no-install-recommends $(APT_NORECS) >/dev/null; \
	fi

build:
	$(CARGO) build --release --workspace

# Default RTL of every unit into build/rtl/<unit>/.
rtl: build
	@for u in $(UNITS); do \
	  $(RTLGEN) emit $$u --clock-ns $(CLOCK_NS) -o $(RTL)/$$u > /dev/null; \
	  echo "emitted $(RTL)/$$u"; \
	done

# verilator -Wall on each emitted unit; warnings fail unless waived in
# constraints/lint_waivers.vlt (each waiver says why).
lint: rtl
	@for u in $(UNITS); do \
	  m=$$(tr - _ <<< $$u); \
	  verilator --lint-only -Wall $(WAIVERS) $(RTL)/$$u/$$m.v --top-module $$m; \
	  echo "lint clean: $$u"; \
	done

# SAT proof (Yosys) that the zero-insert shifter inverts the zero-remove
# shifter at 8 lanes, for every mask and data word (spec §9).
prove: deps build
	constraints/prove_zero_shifters.sh $(RTLGEN)

# The whole suite: sim, generator, co-simulation on RTL and netlists, lint,
# proofs.
test: deps
	$(CARGO) test --release --workspace
	$(MAKE) --no-print-directory prove
	$(MAKE) --no-print-directory lint

# A short co-simulation of UNIT with its waveform (for GTKWave); NETLIST=1
# simulates the unit's gate-level netlist instead (<unit>-net.vcd).
waves: deps build
	@mkdir -p $(BUILD)/waves
	$(CARGO) run --release -q -p tb --bin waves -- --unit $(UNIT) \
	  -o $(BUILD)/waves/$(UNIT)$(if $(NETLIST),-net).vcd $(if $(NETLIST),--netlist)

# Yosys onto the OSU 0.18um cells and OpenSTA: area, critical path and
# maximum clock per unit, in build/reports/.
synth: deps rtl
	@mkdir -p $(REPORTS)
	@for u in $(SYNTH_UNITS); do \
	  constraints/synth.sh $(RTL)/$$u $$(tr - _ <<< $$u) $(LIBERTY) $(CLOCK_NS) $(REPORTS); \
	done
	@cat $(REPORTS)/synth-summary.md

# Co-simulation speed, sustained throughput and latency, and the error and
# effective-bit metrics on the synthetic KV set, in build/reports/.
bench: deps build
	@mkdir -p $(REPORTS)
	$(CARGO) run --release -q -p tb --bin bench -- -o $(REPORTS)/bench.md
	$(KVSIM) gen -o $(BUILD)/kv.npy
	$(KVSIM) profile --input $(BUILD)/kv.npy -o $(BUILD)/thresholds.json
	@printf '## 4. Quantization metrics on the synthetic KV set\n\n`%s`, then `%s`.\n' \
	  "kvsim gen -o $(BUILD)/kv.npy" "kvsim profile --input $(BUILD)/kv.npy -o $(BUILD)/thresholds.json" \
	  | tee -a $(REPORTS)/bench.md
	@for mode in plain shifted; do \
	  cmd="$(KVSIM) metrics --input $(BUILD)/kv.npy --thresholds $(BUILD)/thresholds.json --middle-mode $$mode --json $(REPORTS)/metrics-$$mode.json"; \
	  { printf '\n### Middle mode %s\n\n`%s`\n\n```\n' $$mode "$$cmd"; $$cmd; printf '```\n'; } | tee -a $(REPORTS)/bench.md; \
	done
	@echo "wrote $(REPORTS)/bench.md"

clean:
	rm -rf $(BUILD)
	$(CARGO) clean
