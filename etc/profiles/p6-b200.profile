# p6-b200.48xlarge: 8 B200, 8 EFAv3 (one per GPU) and more on newer
# families in the p6 line, which share the settings until AWS says
# otherwise.
Match=p6-b200.48xlarge,p6*
Include=efa-cuda
# 8 EFA devices on p6-b200 (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf); other p6 types are not listed.
EFADevices=p6-b200.48xlarge:8
