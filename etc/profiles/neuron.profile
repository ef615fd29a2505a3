# neuron: a node with Neuron devices whose instance type no other profile
# names (a new Trainium or Inferentia generation): the Neuron base, as
# aws-ofi-nccl treats every ^trn and ^inf type as Neuron (src/platform-aws.cpp,
# entries "trn1", "trn2", "inf").
Accelerator=neuron
Include=efa-neuron
