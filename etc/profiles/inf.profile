# Inferentia with EFA (inf2): Neuron, as aws-ofi-nccl's "inf" entry
# (^inf.*) treats it (src/platform-aws.cpp).
Match=inf*
Include=efa-neuron
