# What the two VM tiers (scripts/vm-tests.sh, scripts/systemd-vm-tests.sh)
# give the guests they boot under qemu's software emulation (TCG): sourced,
# not run.
#
# The CPU: every feature TCG emulates but 5-level paging (la57), with
# which the guest's kernel walks five levels of page tables, in software,
# at each miss of TCG's TLB: the VM tier took 126 s and 182 CPU-seconds
# with it, 89 s and 134 without (on qemu64, the x86-64 baseline, 91-96 s).
tcg_cpu=max,-la57
# The kernel's command line. norandmaps: TCG keeps the code it translated
# by virtual address, so with randomised mappings every exec translates its
# loader and libraries again (an exec of /bin/true took 35 ms in the guest,
# 17 ms without; the systemd tier 143 s and 110 CPU-seconds, 105 and 66
# without). Neither tier tests address randomisation. The modules udev
# would load for q35's devices cost boot time under TCG: not loaded.
tcg_kernel_args="norandmaps module_blacklist=kvm,kvm_amd,kvm_intel,ahci,libahci,libata,sr_mod,cdrom,psmouse,i2c_i801,i2c_smbus,lpc_ich,iTCO_wdt,iTCO_vendor_support,intel_pmc_bxt,pcspkr,evdev,serio_raw,aesni_intel,sha512_ssse3,sha256_ssse3,sha1_ssse3,sha512_generic,ghash_clmulni_intel,crc32_pclmul,crct10dif_pclmul,crc32c_intel,cryptd,crypto_simd,qemu_fw_cfg,sg,button,scsi_mod,drm"
