hostname
+ hostname
cd /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1/00.score_chain/01.db_split.sh.work/db_split1
+ cd /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1/00.score_chain/01.db_split.sh.work/db_split1
( time  /maps/projects/mjolnir1/people/bgn602/packages/nextpolish/bin/seq_split -d /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1 -m 500000000 -n 3 -t 3 -i 1 -s 390076285800 -p input.sgspart /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1/sgs.fofn )
+ /maps/projects/mjolnir1/people/bgn602/packages/nextpolish/bin/seq_split -d /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1 -m 500000000 -n 3 -t 3 -i 1 -s 390076285800 -p input.sgspart /projects/mjolnir1/people/bgn602/steps/01_comp_study/nextpolish/parameter_eval/t2/A3_em2_1/sgs.fofn
slurmstepd: error: *** JOB 7750998 ON mjolnircomp05fl CANCELLED AT 2023-11-24T03:54:28 DUE TO TIME LIMIT ***
