export declare const DECISION_TESTS: string[];
