# Packages: `packaging/build-deb.sh` (Debian/Ubuntu, CPack DEB, one .deb per
# install component) and packaging/rpm/slurm-ddp.spec (EL, rpmbuild, one
# subpackage each):
#
#   slurm-ddp  (component plugin)   the plugin, the agent, ddp-check-config,
#              the plugstack drop-in, cli_filter.lua, the agent's NCCL
#              profiler, their man pages, the example site config (docs);
#              for every node, login nodes included
#   ddp-train  (component trainer)  ddp-train, ddp-train-plot, ddp-tokenize
#              and their libraries (Gloo, OpenBLAS); for the nodes that train
#              with it (DDP_BUILD_TRAINER=OFF leaves it out)
#
# slurm-ddp depends on the Slurm it was built against (Slurm refuses a plugin
# of another release): on the package that provides it, chosen at configure
# time (DDP_SLURM_FLAVOUR, CMakeLists.txt), or on none for a source install.
set(CPACK_PACKAGE_NAME slurm-ddp)
set(CPACK_PACKAGE_VENDOR "slurm-ddp")
# The packages' Maintainer: a site building its own sets it (or Debian's
# DEBFULLNAME and DEBEMAIL); by default the address the project's commits carry.
set(ddp_maintainer "slurm-ddp maintainers <maintainers@users.noreply.a-seed-ad484d51.example>")
if(DEFINED ENV{DEBFULLNAME} AND DEFINED ENV{DEBEMAIL})
  set(ddp_maintainer "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
endif()
set(DDP_PACKAGE_MAINTAINER "${ddp_maintainer}" CACHE STRING "The packages' Maintainer: NAME <EMAIL>")
set(CPACK_PACKAGE_CONTACT "${DDP_PACKAGE_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each
# package's own synopsis (the first line of its description below).
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_FILE_NAME_INCLUDE_ARCH ON)
set(CPACK_COMPONENTS_ALL plugin)
if(DDP_BUILD_TRAINER)
  list(APPEND CPACK_COMPONENTS_ALL trainer)
endif()

# --- DEB -------------------------------------------------------------------
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies from dpkg-shlibdeps, for each package's own files.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# slurm-ddp
set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME slurm-ddp)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_SECTION admin)
# The Slurm release the plugin was built against, from the package that
# provides it: Debian's plugins (slurm-wlm-basic-plugins) or SchedMD's
# (slurm-smd); a source install (none) is the site's to keep in step.
set(ddp_slurm_deb_package "")
if(DDP_SLURM_FLAVOUR STREQUAL "slurm-wlm")
  set(ddp_slurm_deb_package slurm-wlm-basic-plugins)
elseif(DDP_SLURM_FLAVOUR STREQUAL "slurm-smd")
  set(ddp_slurm_deb_package slurm-smd)
endif()
set(ddp_plugin_description "multi-node data-parallel training on Slurm with one flag (--ddp)
A SPANK plugin that adds --ddp to srun, salloc and sbatch and starts one
agent per node; the agent runs the workers with torchrun's environment,
with job-wide fail-fast, restarts and GPU/CPU/NIC binding. Also
ddp-check-config, the admin's check of the plugstack lines and ddp.conf.
The trainer, ddp-train, is the package ddp-train.")
if(ddp_slurm_deb_package)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_DEPENDS
      "${ddp_slurm_deb_package} (>= ${DDP_SLURM_RELEASE}~), ${ddp_slurm_deb_package} (<< ${DDP_SLURM_NEXT_RELEASE}~)")
  string(APPEND ddp_plugin_description "\n.\nBuilt for Slurm ${DDP_SLURM_RELEASE} (${ddp_slurm_deb_package}).")
else()
  string(APPEND ddp_plugin_description "\n.\nBuilt for a Slurm ${DDP_SLURM_RELEASE} installed from source, which no
package provides: this package depends on no Slurm package, and the site
keeps the plugin's release in step with its Slurm's.")
endif()
# ddp-check-config links the libslurm found, which may be no package's (a
# source install) or a package's without shlibs information (SchedMD's):
# dpkg-shlibdeps must find it (its folder), and then asks for no package
# when it has nothing to say (CPack passes --ignore-missing-info); the
# Slurm dependency above covers it.
# Debian's libslurm has its shlibs: the dependency on its library package.
if(NOT DDP_SLURM_FLAVOUR STREQUAL "slurm-wlm")
  get_filename_component(ddp_libslurm_dir "${DDP_LIBSLURM}" DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${ddp_libslurm_dir}")
endif()
set(CPACK_DEBIAN_PLUGIN_DESCRIPTION "${ddp_plugin_description}")
# The trainer and PyTorch are what the workers run, chosen by the site: never
# pulled onto a node by this package. OpenBLAS: the opt-in pre-flight's
# compute check (ddp-agent --preflight-gemm) loads it when it runs.
set(CPACK_DEBIAN_PLUGIN_PACKAGE_SUGGESTS "ddp-train, python3-torch, libopenblas0")
# The drop-in under /etc is a conffile: an upgrade keeps the admin's edits.
file(WRITE ${CMAKE_BINARY_DIR}/packaging/conffiles "${DDP_SLURM_CONF_DIR}/plugstack.conf.d/ddp.conf\n")
# Maintainer scripts: the old example conffile removed (dpkg-maintscript-helper
# rm_conffile), ddp-check-config's warnings for the admin after install.
foreach(script preinst postinst postrm)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${script}.in ${CMAKE_BINARY_DIR}/packaging/${script} @ONLY)
endforeach()
# lintian's view of those scripts (packaging/lintian-overrides says why).
install(FILES ${CMAKE_CURRENT_LIST_DIR}/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
        RENAME slurm-ddp COMPONENT plugin)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/packaging/conffiles
    ${CMAKE_BINARY_DIR}/packaging/preinst ${CMAKE_BINARY_DIR}/packaging/postinst
    ${CMAKE_BINARY_DIR}/packaging/postrm)

# ddp-train: its files were slurm-ddp's before 0.5.0.
set(CPACK_DEBIAN_TRAINER_PACKAGE_NAME ddp-train)
set(CPACK_DEBIAN_TRAINER_PACKAGE_SECTION science)
set(CPACK_DEBIAN_TRAINER_DESCRIPTION "native C++ data-parallel trainer for slurm-ddp
ddp-train trains image classifiers and small GPT models data-parallel on
CPUs (Gloo, OpenBLAS), started by srun --ddp (slurm-ddp) or torchrun;
ddp-train-plot draws its metrics, ddp-tokenize makes its token files.")
set(CPACK_DEBIAN_TRAINER_PACKAGE_REPLACES "slurm-ddp (<< 0.5.0~)")
set(CPACK_DEBIAN_TRAINER_PACKAGE_BREAKS "slurm-ddp (<< 0.5.0~)")
# ddp-train-plot draws with gnuplot.
set(CPACK_DEBIAN_TRAINER_PACKAGE_SUGGESTS "gnuplot-nox, slurm-ddp")

include(CPack)
