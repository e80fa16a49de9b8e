"""What the tests' probe processes share: their source is text run by ``python -c``."""

#: A probe's peak resident memory in bytes, ``peak()``: its ``VmHWM``, since ``ru_maxrss`` keeps
#: the parent's peak across ``exec`` (a probe started by a 1.5 GB pytest worker reads 1.5 GB)
PEAK = '''
def peak():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
'''
