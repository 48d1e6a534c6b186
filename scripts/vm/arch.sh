# Sourced by scripts/vm/*.sh: how to boot a VM of architecture $arch (a Debian
# architecture name). Sets qemu (the binary), qemu_machine (machine, CPU and
# accelerator), console (the kernel's serial console) and disk (the virtio
# block device model). Declarations only: adding an architecture is a case here.
case $arch in
arm64)
	qemu=qemu-system-aarch64
	# TCG: this machine is x86-64, arm64 can only be emulated. -cpu max has
	# every feature qemu emulates (PAC, BTI, LSE), as recent hardware does.
	qemu_machine="-M virt -cpu max -accel tcg,thread=multi"
	console=ttyAMA0
	disk=virtio-blk-pci
	;;
amd64)
	qemu=qemu-system-x86_64
	if [ -w /dev/kvm ]; then
		qemu_machine="-M q35 -cpu host -accel kvm"
	else
		qemu_machine="-M q35 -cpu max -accel tcg"
	fi
	console=ttyS0
	disk=virtio-blk-pci
	;;
*)
	echo "nodescope: no VM recipe for architecture '$arch' (arm64, amd64)" >&2
	exit 2
	;;
esac
