# default: any other instance with a usable EFA device (hpc*, c5n, ...):
# the settings that hold for every EFA stack, nothing accelerator-specific.
Match=*
Include=efa-common
