# Packages: `packaging/build-deb.sh` (Debian/Ubuntu, CPack DEB) and
# packaging/rpm/slurm-ddp.spec (EL, rpmbuild). One package, slurm-ddp, holds
# the plugin, the agent, the trainer, the plugstack drop-in, the example site
# config and the man pages.
set(CPACK_PACKAGE_NAME slurm-ddp)
set(CPACK_PACKAGE_VENDOR "slurm-ddp")
set(CPACK_PACKAGE_CONTACT "slurm-ddp maintainers <slurm-ddp@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "multi-node data-parallel training on Slurm with one flag (--ddp)")
set(CPACK_PACKAGE_DESCRIPTION "A SPANK plugin that adds --ddp to srun, salloc and sbatch and starts one
agent per node; the agent runs the workers with torchrun's environment,
with job-wide fail-fast, restarts and GPU/CPU/NIC binding. Also ddp-train,
a native C++ data-parallel trainer.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_FILE_NAME_INCLUDE_ARCH ON)

# --- DEB -------------------------------------------------------------------
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies from dpkg-shlibdeps; Slurm pinned to the release the
# plugin was built against (Slurm refuses plugins of another release).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "slurm-wlm-basic-plugins (>= ${DDP_SLURM_RELEASE}~), slurm-wlm-basic-plugins (<< ${DDP_SLURM_NEXT_RELEASE}~)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-torch")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gnuplot-nox")
# Files under /etc are conffiles: an upgrade keeps the admin's edits.
file(WRITE ${CMAKE_BINARY_DIR}/packaging/conffiles
     "${DDP_SLURM_CONF_DIR}/plugstack.conf.d/ddp.conf\n${DDP_SLURM_CONF_DIR}/ddp.conf.example\n")
# postinst: ddp-check-config's warnings for the admin; never fails the install.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/packaging/conffiles
    ${CMAKE_CURRENT_LIST_DIR}/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
