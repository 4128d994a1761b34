import { Construct } from 'constructs';

/**
 * A part of the stack: its resources get the logical ids they would have as the stack's own
 * children, as they were before the stack was split into parts (AllocationStack.allocateLogicalId),
 * so an upgrade of a deployed stack replaces none of them. Two parts therefore cannot both hold a
 * resource of the same id: the synth fails on the duplicate logical id.
 */
export class Part extends Construct {}
