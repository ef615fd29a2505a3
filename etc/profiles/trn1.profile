# trn1.32xlarge: 16 Trainium (32 NeuronCores), 8 EFA.
Match=trn1.32xlarge,trn1.2xlarge
Include=efa-neuron
