"""The CPUs an hwloc topology (lstopo's XML) puts next to a PCI device.

  topology_locality.py TOPOLOGY.xml BUS_ID
Prints "local=CPUSET machine=CPUSET" (hwloc's hex cpusets): the cpuset of the
device's nearest non-I/O ancestor, and the whole machine's. Equal means the
topology shows no locality for the device (a VM often shows none).
"""
import sys
import xml.etree.ElementTree as ET

path, bus = sys.argv[1], sys.argv[2].lower()
if bus.count(":") == 1:
    bus = "0000:" + bus
bus = bus[-12:]  # dddd:bb:dd.f
root = ET.parse(path).getroot()
machine = root.find("object")
parents = {child: parent for parent in root.iter() for child in parent}


def pci_busid(obj):
    return obj.get("pci_busid", "").lower()


for obj in root.iter("object"):
    if obj.get("type") == "PCIDev" and pci_busid(obj)[-12:] == bus:
        up = parents.get(obj)
        while up is not None and up.get("cpuset") is None:
            up = parents.get(up)
        print(f"local={up.get('cpuset') if up is not None else '?'} machine={machine.get('cpuset')}")
        sys.exit(0)
print(f"local=none machine={machine.get('cpuset')}: no PCI device {bus} in {path}")
sys.exit(1)
