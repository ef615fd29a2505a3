# Trainium generations without a profile of their own (aws-ofi-nccl
# src/platform-aws.cpp: "trn1" ^trn1.*, "trn2" ^trn2.*, both Neuron).
Match=trn*
Include=efa-neuron
