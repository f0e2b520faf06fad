# lit configuration for nhlo's FileCheck tests (docs/testing.md).
#
# `lit testdata/lit` from the checkout uses the build in build/ beside testdata/; set
# NHLO_BUILD_DIR to use another build directory (meson test does). The build paths come from the
# lit.site.cfg.py meson writes into BUILD/testdata/lit/.
import os

import lit.formats

config.name = 'nhlo'
# lit's own shell: pipelines fail when any stage fails, and `not` and `cd` work everywhere.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = ['.hlo', '.test']
config.excludes = ['Inputs', 'lit.cfg.py', 'lit.site.cfg.py.in', 'meson.build']
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

if not hasattr(config, 'nhlo_tools_dir'):
    build_dir = os.environ.get('NHLO_BUILD_DIR') or os.path.join(config.test_source_root, '..', '..', 'build')
    site = os.path.join(os.path.abspath(build_dir), 'testdata', 'lit', 'lit.site.cfg.py')
    if not os.path.exists(site):
        lit_config.fatal('no %s: build nhlo first (tools/bootstrap), or set NHLO_BUILD_DIR' % site)
    config.nhlo_loading_site = True
    lit_config.load_config(config, site)

for tool in ['nhlo-compile', 'nhlo-run', 'nhlo-objdump', 'nhlo-golden']:
    if not os.access(os.path.join(config.nhlo_tools_dir, tool), os.X_OK):
        lit_config.fatal('%s is not built in %s' % (tool, config.nhlo_tools_dir))

# RUN lines name the programs bare: nhlo's first, then FileCheck, not, count and split-file.
config.environment['PATH'] = os.pathsep.join(
    [config.nhlo_tools_dir, config.llvm_tools_dir, config.environment.get('PATH', os.environ['PATH'])])
# %nhlo_tools_dir names the programs by full path, for RUN lines that change PATH (a test that
# hides Graphviz's `dot` from nhlo-compile).
config.substitutions.append(('%nhlo_tools_dir', config.nhlo_tools_dir))
# A sanitizer build reserves terabytes of address space for its shadow memory, so tests that
# limit address space (ulimit -v) are `UNSUPPORTED: sanitizer` there.
if getattr(config, 'nhlo_sanitizers', 'none') not in ('', 'none'):
    config.available_features.add('sanitizer')
# Diagnostics and values must not depend on the caller's locale.
config.environment['LC_ALL'] = 'C'
